"""The hardware configurations, re-exported from their home `steplus.lowering.fabric_config`
(the target description placement and simulation share; see that module).

Example:

```python
from steplus.runtime.fabric.config import get_preset
get_preset("swiglu-hdl").base_depth   # 1
```
"""

from steplus.lowering.fabric_config import (  # noqa: F401
    FIELD_LIMITS, MAX_CHANNELS, PRESETS, SN40L, STEP_EVAL, SWIGLU_HDL, HBMConfig,
    HardwareConfig, get_preset,
)
