# pdtopo stand-in: the environment settings tokenspeed's PD modules read,
# with tokenspeed's defaults, overridable by the same variable names.
import os


class _Env:
    def __init__(self, name, default, kind):
        self.name, self.default, self.kind = name, default, kind

    def get(self):
        raw = os.environ.get(self.name)
        if raw is None:
            return self.default
        if self.kind is bool:
            return raw.lower() in ("1", "true", "yes")
        return self.kind(raw)

    def get_set_value_or(self, fallback):
        return self.get() if self.name in os.environ else fallback


class _Envs:
    def __getattr__(self, name):
        defaults = {
            "TOKENSPEED_DISAGGREGATION_FAILED_SESSION_TTL": (30, int),
            "TOKENSPEED_DISAGGREGATION_HEARTBEAT_INTERVAL": (5.0, float),
            "TOKENSPEED_DISAGGREGATION_HEARTBEAT_MAX_FAILURE": (2, int),
            "TOKENSPEED_DISAGGREGATION_QUEUE_SIZE": (4, int),
            "TOKENSPEED_DISAGGREGATION_THREAD_POOL_SIZE": (-1, int),
            "TOKENSPEED_DISAGGREGATION_BOOTSTRAP_TIMEOUT": (120, int),
            "TOKENSPEED_DISAGGREGATION_WAITING_TIMEOUT": (300, int),
            "TOKENSPEED_PD_LAYERWISE_DEBUG": (False, bool),
            "TOKENSPEED_PD_PREFILL_METADATA_TIMEOUT": (5.0, float),
        }
        default, kind = defaults[name]
        return _Env(name, default, kind)


envs = _Envs()
