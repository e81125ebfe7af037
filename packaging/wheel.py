"""Packs a prebuilt dupcheck binary as the wheel maturin makes of it.

Usage: wheel.py BINARY DIST_INFO TAG OUT_DIR

DIST_INFO is the `NAME-VERSION.dist-info` folder that `maturin pep517
write-dist-info` wrote from pyproject.toml and Cargo.toml (its METADATA is
kept as it is); TAG the platform tag (`manylinux_2_34_x86_64`). The wheel
holds the binary at `NAME-VERSION.data/scripts/dupcheck`, which pip, pipx and
uv install on PATH, as maturin's `bindings = "bin"` wheels do. It is
reproducible: fixed dates and modes, entries in a fixed order.

packaging/dist.sh uses it where the binary was not built by maturin's own
cargo call (the tests' debug build, stripped); `make dist` lets maturin build
the wheel.
"""

import base64
import hashlib
import pathlib
import sys
import zipfile

DATE = (1980, 1, 1, 0, 0, 0)


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"{name},sha256={digest.decode()},{len(data)}"


def main() -> None:
    binary, dist_info, tag, out_dir = sys.argv[1:5]
    dist_info = pathlib.Path(dist_info)
    stem = dist_info.name.removesuffix(".dist-info")  # NAME-VERSION
    wheel_meta = (
        "Wheel-Version: 1.0\n"
        "Generator: dupcheck packaging/wheel.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: py3-none-{tag}\n"
    ).encode()
    entries = [
        (f"{stem}.data/scripts/dupcheck", pathlib.Path(binary).read_bytes(), 0o755),
        (f"{stem}.dist-info/METADATA", (dist_info / "METADATA").read_bytes(), 0o644),
        (f"{stem}.dist-info/WHEEL", wheel_meta, 0o644),
    ]
    record_name = f"{stem}.dist-info/RECORD"
    record = "".join(record_line(n, d) + "\n" for n, d, _ in entries)
    record += f"{record_name},,\n"
    entries.append((record_name, record.encode(), 0o644))

    path = pathlib.Path(out_dir) / f"{stem}-py3-none-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, DATE)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    print(path)


if __name__ == "__main__":
    main()
