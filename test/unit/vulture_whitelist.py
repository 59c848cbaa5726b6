"""Names vulture cannot see used, because they are used dynamically (test/unit/test_dead_code.py).

vulture reads this file with the sources: a name written here counts as used.
Only names a framework or a registry calls by name belong here, each with why;
dead code is deleted instead. (The Lustre grammar's rule names, which Lark calls
on the parser's Transformer by name, are added by the test from lustre.lark.)
"""
# ruff: noqa
# pyright: basic

_ = object()

# xDSL reads these class attributes / calls these hooks of op and attribute definitions
# (irdl_op_definition, the parser and printer, the verifier).
_.traits
_.assembly_format
_.irdl_options
_.verify_
_.custom_verify
_.parse_parameters
_.print_parameters
_.get_default_indexing_maps  # linalg named-op interface, called by xDSL's linalg
_.get_iterator_types  # same
_.declare_resource  # xDSL's OpAsmDialectInterface (dialects/resources.py): dense_resource blobs
_.parse_resource  # same
_._blob_storage  # same: the interface's storage, read by xDSL's printer
# xDSL's PatternRewriteWalker calls a RewritePattern's match_and_rewrite.
_.match_and_rewrite
# xDSL's xDSLOptMain calls these overrides (tools/step_opt.py).
_.register_all_dialects
_.register_all_passes
_.register_all_targets
_.register_all_arguments
_.setup_pipeline
_.last_module  # step-opt keeps the last module for the tests' in-process runs
# sympy's printer calls `_sympystr` on our dim expressions (dialects/step/dims.py).
_._sympystr
# importlib's meta-path finder protocol (runtime/fabric/native.py).
_.find_spec
# torch.nn.Module.__call__ calls forward.
_.forward
# argparse calls an Action with (parser, namespace, values, option_string).
_.namespace
_.option_string
# OR-Tools reads the solver parameters set on it (passes/allspark/layout.py, ilp_cpsat.py).
_.max_time_in_seconds
_.num_workers
# setuptools' build_ext reads these (runtime/fabric/build_native.py).
_.build_lib
_.build_temp
# xDSL's parser reads the state's current token (dialects/resources.py re-lexes a blob).
_.current_token
# the MLIR Python context reads it (lowering/mlir_bridge.py).
_.allow_unregistered_dialects
# held so the IREE runtime objects outlive the call that made them (tools/iree_modular.py).
_._iface
# FlexASR's start triggers are found by name, getattr(self, "_start_" + unit) (runtime/ila/flexasr.py).
_._start_ctrl
_._start_lr
_._start_zp
_._start_ln
_._start_att
# a documented diagnostic counter of the fabric's compute contexts (docs/fabric.md).
_.misaligned
# the table docs/guide/allspark.md lists the assumed PIM parameters from.
_.ASSUMED_FIELDS
