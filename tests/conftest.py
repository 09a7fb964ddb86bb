"""Shared test configuration: Hypothesis profiles, chosen with the HYPOTHESIS_PROFILE variable.

- `dev` (default): a few hundred examples per property, so the whole suite stays fast.
- `ci`: thousands of examples per property; failing examples are printed for reproduction.
- `thorough`: tens of thousands per property, for soak runs.

No deadline in any profile: the first examples pay one-off import and schema-compile costs, and a
loaded CI machine must not turn that into a flaky failure.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dev", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=2_000, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough",
    max_examples=20_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
