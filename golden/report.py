"""Plain-text and Markdown tables (used by the CLI, the demo and the benchmarks)."""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["format_table", "fmt", "output_path", "probe_output", "OutputPathError", "run_info", "write_json", "run_parts"]


class OutputPathError(ValueError):
    """An output option names a file that cannot be written."""


def output_path(flag: str, value: str | None, *, probe: bool = True) -> Path | None:
    """The file an output option (``flag``) names, checked before anything runs:
    one-line errors for an empty name, a directory, a parent folder that is a
    file, and (``probe``: :func:`probe_output`) a place where no file can be made.
    ``None`` stays ``None`` (the option was not given)."""
    if value is None:
        return None
    if not str(value).strip():
        raise OutputPathError(f"{flag} needs a file name, not {value!r}")
    value = str(value)
    path = Path(value)
    if path.is_dir() or value.endswith(("/", os.sep)):
        raise OutputPathError(f"{flag} {value}: is a directory; give a file name")
    for parent in path.parents:            # the nearest existing folder must be a folder
        if parent.exists():
            if not parent.is_dir():
                raise OutputPathError(f"{flag} {value}: {parent} is a file, not a folder")
            break
    if probe:
        probe_output(flag, value, path)
    return path


def probe_output(flag: str, value: str, path: Path) -> None:
    """Whether the write at the end of a run can happen, tried without changing
    anything: an existing regular file must be writable (it is not opened: a
    symbolic link, a pipe or a device is left to the write itself); for a new
    file, a file must be creatable in the nearest existing folder (a scratch file
    is made there and removed; no folder is made)."""
    import tempfile
    if path.is_symlink():                   # the write goes to the link's target
        real = Path(os.path.realpath(path))
        if not real.parent.is_dir():
            raise OutputPathError(f"{flag} {value}: links to {real}, in a folder that does not exist")
        path = real
    if os.path.lexists(path):
        if path.is_file() and not os.access(path, os.W_OK):
            raise OutputPathError(f"{flag} {value}: the file is not writable")
        return
    folder = next((p for p in path.parents if p.exists()), Path("."))
    try:
        fd, scratch = tempfile.mkstemp(dir=folder, prefix=".graphunits-probe-")
        os.close(fd)
        os.unlink(scratch)
    except OSError as e:
        raise OutputPathError(f"{flag} {value}: cannot write in {folder} ({e.strerror or e})") from None


def fmt(value, digits: int = 3) -> str:
    """A compact string for a table cell."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value == 0 or 1e-3 <= abs(value) < 1e6:
            return f"{value:.{digits}f}".rstrip("0").rstrip(".") if "." in f"{value:.{digits}f}" else f"{value:.{digits}f}"
        return f"{value:.{digits}g}"
    return str(value)


def format_table(headers: list[str], rows: list[list], *, markdown: bool = False, title: str | None = None) -> str:
    """Align ``rows`` under ``headers``; ``markdown=True`` gives a GitHub table."""
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        if len(row) != len(headers):
            raise ValueError(f"row has {len(row)} cells for {len(headers)} headers: {row}")
        widths = [max(w, len(c)) for w, c in zip(widths, row)]
    lines = []
    if title:
        lines.append(title)
    if markdown:
        lines.append("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |")
        lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for row in cells:
            lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
    else:
        lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        for row in cells:
            lines.append("  ".join(c.rjust(w) if _numeric(c) else c.ljust(w) for c, w in zip(row, widths)).rstrip())
    return "\n".join(lines)


def _numeric(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def run_info() -> dict:
    """Where and when a benchmark ran: ``machine``, ``python``, ``date`` (the
    header of every benchmark's JSON)."""
    import platform
    import time
    return {"machine": platform.machine(), "python": platform.python_version(), "date": time.strftime("%Y-%m-%d")}


def write_json(doc: dict, path, t0: float, *, default=None) -> Path:
    """Write a benchmark's results ``doc`` to ``path`` (folders created) and say
    where, with the seconds since ``t0``; ``default`` as for ``json.dumps``."""
    import json
    import time
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2, default=default))
    print(f"\n(JSON: {out}; {time.time() - t0:.0f} s)")
    return out


def run_parts(args, parts, *, default=None) -> dict:
    """The end of a benchmark's ``main``: tune the allocator
    (:func:`golden.perf.tune_allocator`), then for each ``(letter, key, part)`` of
    ``parts`` whose letter is in ``args.part`` set ``doc[key] = part(args, t0)``
    (a blank line after each but the last of ``parts``), and write ``doc``, headed
    by :func:`run_info`, to ``args.json`` with :func:`write_json` (``default``
    as there). Returns ``doc``."""
    import time
    from golden.perf import tune_allocator
    tune_allocator()
    t0 = time.time()
    doc = run_info()
    for i, (letter, key, part) in enumerate(parts):
        if letter in args.part:
            doc[key] = part(args, t0)
            if i < len(parts) - 1:
                print()
    write_json(doc, args.json, t0, default=default)
    return doc
