"""pim-orchestrate's numbers (issue 24): an image size the model's patches do not divide is an
error (`--img 225` printed 225 and computed 224), and --time-limit / --node-cap-mib are plain
decimals (float() also read `1_0`, Arabic-Indic digits and `1e-300`)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("model, img, message", [
    ("swin-t", "225", "image size 225 is not a multiple of 32 (a 4-pixel patch, then three 2x2 "
                      "patch merges); e.g. 224"),
    ("pvt-s", "240", "image size 240 is not a multiple of 32 (a 4-pixel patch, then three 2x2 "
                     "patch merges); e.g. 224"),
    ("vit-b", "225", "image size 225 is not a multiple of the patch size 16 of vit-b; e.g. 224"),
    ("vit-h", "640", "image size 640 is not a multiple of the patch size 14 of vit-h; e.g. 630"),
])
def test_an_image_size_the_patches_do_not_divide_is_an_error(model, img, message, capsys):
    from steplus.tools.pim_orchestrate import main

    assert main(["--model", model, "--img", img]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == f"pim-orchestrate: error: {message}\n"


@pytest.mark.parametrize("flag, value", [
    ("--node-cap-mib", "1_0"),  # float() reads 10
    ("--time-limit", "\u0661\u0660"),  # Arabic-Indic 10: float() reads 10
    ("--time-limit", "nan"),
    ("--node-cap-mib", "1e-300"),
])
def test_numbers_on_the_command_line_are_plain_decimals(flag, value, capsys):
    from steplus.tools.pim_orchestrate import main

    assert main(["--model", "swin-t", flag, value]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"pim-orchestrate: error: argument {flag}: expected a number, got '{value}'\n"
