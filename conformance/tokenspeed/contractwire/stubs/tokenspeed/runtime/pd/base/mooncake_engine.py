# pdtopo stand-in for the Mooncake transfer engine: nothing moves. A tool
# may set MooncakeTransferEngine.on_transfer to see (and veto, by returning
# nonzero) every batch a prefill rank would write.
import itertools

_sessions = itertools.count(17000)


class MooncakeTransferEngine:
    on_transfer = None

    def __init__(self, hostname, gpu_id, ib_device=None):
        self.session_id = f"{hostname}:{next(_sessions)}"
        self.registered = []

    def register(self, ptr, length):
        self.registered.append((ptr, length))

    def get_session_id(self):
        return self.session_id

    def batch_transfer_sync(self, session_id, src, dst, lengths):
        hook = MooncakeTransferEngine.on_transfer
        return hook(self, session_id, src, dst, lengths) if hook else 0
