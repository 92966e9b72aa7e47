# pdtopo stand-in: every address is PDTOPO_HOST (default 127.0.0.1).
import os
import socket


def _host():
    return os.environ.get("PDTOPO_HOST", "127.0.0.1")


def get_local_ip_by_remote():
    return _host()


def get_ip():
    return _host()


def get_free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((_host(), 0))
        return s.getsockname()[1]
