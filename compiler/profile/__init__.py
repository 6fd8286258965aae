"""Profiles (docs/profiles.md): what launches did, keyed by PTX position, and their use by the compiler.

* :mod:`xcc.profile.format` -- the :class:`Profile`, its versioned JSON form, validation with located errors;
* :mod:`xcc.profile.record` -- a profile from one launch (the IR interpreter's block and branch counts, the
  cycle model's stalls per PTX line);
* :mod:`xcc.profile.merge` -- several launches' profiles into one (``xcc profile merge``);
* :mod:`xcc.profile.use` -- a profile mapped onto the IR for the passes (branch weights, trip counts, hot
  calls, values to specialise on).
"""

from xcc.profile.format import FORMAT, VERSION, Profile, ProfileError, load_profile, module_hash
from xcc.profile.merge import merge_profiles

__all__ = ["FORMAT", "VERSION", "Profile", "ProfileError", "load_profile", "merge_profiles", "module_hash"]
