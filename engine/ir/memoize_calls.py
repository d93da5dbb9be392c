"""Names shared by the memoization intrinsics (engine/lower/memoization.py), the backend and
the runtime cache (engine/runtime/memoization_cache.py).

`memoize_lookup#N(values...)` and `memoize_store#N(values...)` pass their arguments' bits to
the C symbols MEMOIZE_HOOKS names (Python callbacks in the JIT) and return the hook's int32;
N is the memoized Func's identity. `buffer_address#NAME()` is the address of buffer NAME
(an input image or a Func's allocation) as a uint64, for those calls only.
"""

MEMOIZE_LOOKUP_PREFIX = "memoize_lookup#"
MEMOIZE_STORE_PREFIX = "memoize_store#"
BUFFER_ADDRESS_PREFIX = "buffer_address#"

MEMOIZE_HOOKS = {MEMOIZE_LOOKUP_PREFIX: "pw_memoize_lookup", MEMOIZE_STORE_PREFIX: "pw_memoize_store"}
MEMOIZE_CALL_PREFIXES = (MEMOIZE_LOOKUP_PREFIX, MEMOIZE_STORE_PREFIX, BUFFER_ADDRESS_PREFIX)
