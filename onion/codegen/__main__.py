"""``python -m onion.codegen [--select FILE | --select all | --reset]``: regenerate onion/_generated.

``--select FILE`` builds only the operators (and dtypes) FILE selects (PyTorch's selected-operators YAML,
see ``onion/codegen/selection.py``) and keeps the selection for later imports; ``--select all`` or
``--reset`` goes back to the full build; without either, the kept selection (if any) is built again."""
import argparse
import sys

from .model import CodegenError
from .runner import OUT, SELECTION_FILE, regenerate

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m onion.codegen", description=__doc__.split("\n")[0])
    parser.add_argument("--select", metavar="FILE", help="selected-operators YAML for a selective build, "
                        "or 'all' for the full build")
    parser.add_argument("--reset", action="store_true", help="drop the kept selection: the full build")
    ns = parser.parse_args()
    select = "all" if ns.reset else ns.select
    try:
        files = regenerate(select)
    except CodegenError as e:
        print(f"codegen error: {e}", file=sys.stderr)
        sys.exit(1)
    import os
    kind = f"selective build from {SELECTION_FILE}" if os.path.exists(SELECTION_FILE) else "full build"
    print(f"wrote {len(files)} files to {OUT} ({kind}): {', '.join(files)}")
