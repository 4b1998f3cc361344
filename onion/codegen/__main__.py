"""``python -m onion.codegen``: regenerate onion/_generated from the YAML."""
import sys

from .model import CodegenError
from .runner import OUT, regenerate

if __name__ == "__main__":
    try:
        files = regenerate()
    except CodegenError as e:
        print(f"codegen error: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"wrote {len(files)} files to {OUT}: {', '.join(files)}")
