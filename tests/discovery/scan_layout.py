"""Run discovery over a Layout given as JSON on argv and print the catalog as JSON.

The discovery tests run it as a child process so that, when the suite runs as root, the child
can drop the capabilities that let root read any file (see `run_scan`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aai_gateway.cli.scan import catalog_as_json
from aai_gateway.discovery import DiscoveryOptions, Layout, build_catalog, discovery_sources


def main() -> None:
    spec = json.loads(sys.argv[1])
    layout = Layout(
        os=spec["os"],
        home=Path(spec["home"]),
        xdg_data_home=Path(spec["xdg_data_home"]),
        xdg_data_dirs=tuple(Path(p) for p in spec["xdg_data_dirs"]),
        appdata=Path(spec["appdata"]) if spec.get("appdata") else None,
        opt_root=Path(spec["opt_root"]),
        applications_roots=tuple(Path(p) for p in spec["applications_roots"]),
        derived_data=Path(spec["derived_data"]),
    )
    options = DiscoveryOptions(
        paths=[Path(p) for p in spec["paths"]],
        no_default_paths=spec.get("no_default_paths", False),
        dev=spec["dev"],
        bundled_dir=Path(spec["bundled_dir"]) if spec.get("bundled_dir") else None,
    )
    catalog = build_catalog(discovery_sources(layout, options), spec["os"])
    sys.stdout.write(json.dumps(catalog_as_json(catalog, None)))


if __name__ == "__main__":
    main()
