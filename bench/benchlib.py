"""What the benchmark scripts share."""
import os
import sys

PAGE_REPORTING = "/sys/module/page_reporting/parameters/page_reporting_order"


def page_reporting_off():
    """Turns a VM guest's free page reporting off (see bench/README.md) and
    returns the function that restores it, or None when there is nothing to
    turn off. On a guest with free page reporting (virtio-balloon), pages
    that drop_caches frees are handed to the host about 2 s later, and every
    page the next test puts in the page cache is then faulted in again by
    the host: a tool that reads right after dropping caches is then faster
    than one that sleeps first, and every figure is noisier. Off means the
    largest order the kernel takes, above any free block it has."""
    if not os.path.exists(PAGE_REPORTING):
        return None
    with open(PAGE_REPORTING) as f:
        order = f.read().strip()

    def set_order(value):
        try:
            with open(PAGE_REPORTING, "w") as f:
                f.write("%s\n" % value)
            return True
        except OSError:
            return False

    off = next((o for o in range(32, int(order), -1) if set_order(o)), None)
    if off is None:
        return None
    print("free page reporting off for the run (page_reporting_order %s -> %d)" % (order, off),
          file=sys.stderr)
    return lambda: set_order(order)
