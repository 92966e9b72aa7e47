# pdtopo stand-in: the logger factory tokenspeed's PD modules import.
import logging


class _Logger(logging.Logger):
    _once = set()

    def warning_once(self, msg, *args):
        if msg not in self._once:
            self._once.add(msg)
            self.warning(msg, *args)


def get_colorful_logger(name):
    logging.setLoggerClass(_Logger)
    try:
        return logging.getLogger(name)
    finally:
        logging.setLoggerClass(logging.Logger)
