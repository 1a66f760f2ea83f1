"""The Chinese edition's terms (issue 27): one glossary, the start page's 术语表, and every Chinese
text a reader meets uses its words. The glossary's third column lists the variants that drifted
in (账本 for the ledger, 档位 for a durability mode, ...); this test reads that column and fails
when a zh lesson, a zh document or the zh catalogue still says one of them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from labkit.language import catalogue

ROOT = Path(__file__).resolve().parent.parent
ZH = ROOT / "notebooks" / "zh"
START = ZH / "00_start_here.ipynb"
HEADING = "## 术语表"
QUOTED = re.compile(r"「([^」]+)」")


def glossary_cell() -> str:
    """The start page's cell that holds the glossary."""
    cells = json.loads(START.read_text(encoding="utf-8"))["cells"]
    sources = ["".join(cell["source"]) for cell in cells]
    found = [source for source in sources if source.startswith(HEADING)]
    assert len(found) == 1, f"{START.name} has {len(found)} cells starting {HEADING!r}"
    return found[0]


def forbidden() -> dict[str, str]:
    """Each variant of the glossary's third column, and the term the glossary says instead."""
    variants = {}
    for line in glossary_cell().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 3:
            variants.update(dict.fromkeys(QUOTED.findall(cells[2]), cells[1]))
    return variants


def zh_texts() -> dict[str, str]:
    """Every Chinese text a reader meets, by where it is: each cell of each zh lesson (the
    glossary cell left out: it names the variants), the zh documents, each zh catalogue entry."""
    texts = {}
    for path in sorted(ZH.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            if not source.startswith(HEADING):
                texts[f"{path.name} cell {cell['id']}"] = source
    for path in sorted(ZH.glob("*.md")):
        texts[path.name] = path.read_text(encoding="utf-8")
    for key, text in catalogue("zh").items():
        texts[f"catalogue zh {key}"] = text
    return texts


def test_the_glossary_names_variants_to_look_for():
    variants = forbidden()
    # the terms issue 27 found drifting: ledger, durability mode, receiver
    assert {"账本", "档位", "接收方"} <= set(variants), variants
    assert variants["账本"].startswith("流水文件"), variants


def test_no_zh_text_uses_a_variant_the_glossary_forbids():
    variants = forbidden()
    found = [
        f"{where}: {variant!r} (the glossary says {variants[variant]})"
        for where, text in zh_texts().items()
        for variant in variants
        if variant in text
    ]
    assert found == [], "\n".join(found)
