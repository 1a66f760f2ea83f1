"""What the crash explorer runs: the reader's code, named `module:callable`, and where it lives.

The caller (a notebook, the CLI) only names the code and finds its file; it never imports it.
Only the explorer's workers load it: a module in the caller's folder by its file path alone
(that folder never joins any import path, so a `json.py` beside it stays unread), a module of a
package in the caller's folder by its dotted name, its packages loaded from their folders alone
(so that its relative imports work, and its `email.py` is `notifier.email`, never the standard
library's `email`), any other module by name from labkit's own path (`python -I`: no current
folder, no $PYTHONPATH), and an exercise's answer from its source text. Parent side:
`name_target`; worker side: `load` (standard library only), whose BadTarget the explorer turns
into the caller's LabError.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import re
import sys
from typing import TYPE_CHECKING

from labkit.studies.explorer.code_cache import compiled

if TYPE_CHECKING:  # pathlib is for the caller's side: a worker starts faster without it
    from pathlib import Path

__all__ = [
    "KINDS",
    "READER_FILE",
    "BadTarget",
    "check_importable",
    "lab_folder",
    "load",
    "load_function",
    "name_target",
    "named",
    "on_import_path",
    "source_target",
]

# lesson 2's step(control, effect, gate); a LangGraph graph; run(checkpointer, resume)
KINDS = ("step", "graph", "callable")
READER_FILE = "<your code>"  # an answer given as source text, as a traceback names it
VARARGS = 0x04 | 0x08  # a code object's flags for *args and **kwargs (inspect.CO_VARARGS, ...)
DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")


class BadTarget(Exception):
    """A target or checker that names no code of the kind it must (no such module, no such
    name in it, not a function): the caller's bad input, found only where the code is loaded.
    Its `code` and `fields` are cli.error's, for the kernel's LabError (workers say English)."""

    def __init__(self, message: str, code: str, **fields: object) -> None:
        super().__init__(message)
        self.code, self.fields = code, fields


def name_target(text: object, what: str = "target", folder: str | None = None) -> dict:
    """`module:callable` as a target the workers can load: a file of the reader's folder
    (`folder`, the current one by default) by its path, else a module by name. Checked here,
    in one line, before anything starts; the module itself is first read by a worker."""
    from pathlib import Path

    from labkit.bench.errors import described, refusal

    if not isinstance(text, str) or text.count(":") != 1:
        raise refusal("explore_target_form", what=what, value=described(text))
    module, name = text.split(":")
    if not DOTTED.match(name):
        raise refusal("explore_target_name", what=what, text=repr(text), name=repr(name))
    folder = Path.cwd() if folder is None else Path(folder)
    if module.endswith(".py"):
        path = (folder / module).resolve()
        if not path.is_file():
            raise refusal("explore_no_file", what=what, text=repr(text), path=str(path))
        return {"path": str(path), "name": name, "label": text, "what": what}
    if not DOTTED.match(module):
        raise refusal("explore_not_module", what=what, text=repr(text), module=repr(module))
    named_code = {"module": module, "name": name, "label": text, "what": what}
    top, dot, _ = module.partition(".")
    if dot and (folder / top).is_dir():  # a package of the reader's: by its name, from there
        return {**named_code, "folder": str(folder.resolve())}
    mine = folder / f"{module}.py"
    if not dot and mine.is_file():
        return {"path": str(mine.resolve()), "name": name, "label": text, "what": what}
    return named_code


def on_import_path(target: dict, folder: object) -> dict:
    """The target, with `folder` (checked: an existing folder) first on its worker's import
    path; none by default, so a `json.py` beside the reader's module stays unread."""
    from pathlib import Path

    from labkit.bench.errors import refusal

    if folder is None:
        return target
    if not isinstance(folder, (str, Path)) or not Path(folder).is_dir():
        raise refusal("explore_path", value=repr(folder))
    return {**target, "import_path": str(Path(folder).resolve())}


def check_importable(target: dict, *others: dict | None) -> None:
    """A target (or its checker, its resume function: `others`) named by module, not a file
    of the reader's folder, whose top package is nowhere: not here, nor in the target's
    `import_path` (`--path`). Said now, in one line, as the worker would say it, not seconds
    later once a server has started (issue 25, item 15). Nothing is imported: the top name is
    only looked for. This process's path holds the workers' (and more): a module found here
    and missing there is still the worker's to say."""
    from labkit.bench.errors import refusal

    import_path = target.get("import_path")
    for named_code in (target, *others):
        if not named_code or "module" not in named_code or "folder" in named_code:
            continue
        top = named_code["module"].partition(".")[0]
        if importlib.util.find_spec(top) is not None:
            continue
        if import_path and importlib.machinery.PathFinder.find_spec(top, [import_path]):
            continue
        module = repr(named_code["module"])
        raise refusal("explore_no_module", **said_as(named_code), module=module)


def lab_folder() -> Path:
    """A folder of your own in the runs home, for the modules you explore from a notebook
    (`%%writefile {lab}/my_graph.py`): kept in use, so `labkit clean` leaves it, until the
    kernel ends. Nothing of yours lands beside the lessons."""
    from labkit.bench.folders import new_run_dir

    return new_run_dir(None, "my-lab-")


def source_target(source: str, name: str) -> dict:
    """An answer given as source text (an exercise): loaded in the worker, under READER_FILE."""
    return {"source": source, "name": name, "label": f"{name} (your code)"}


def load(target: dict, namespace: dict | None = None) -> tuple[object, str, dict]:
    """In a worker: the target's object, the file its code is in, and its module's names.
    `namespace` is what an answer given as source text finds defined (lesson 2's KEY, PAYLOAD)."""
    if "source" in target:
        names = {**(namespace or {}), "__name__": "reader"}
        exec(compiled(target["source"], READER_FILE), names)  # the reader's own lab
        file = READER_FILE
    else:
        module = import_target(target)
        names, file = vars(module), module.__file__
    found = names.get(target["name"])
    if found is None:
        name = repr(target["name"])
        said = f"{named(target)}: the module defines no {name}"
        raise BadTarget(said, "explore_no_name", **said_as(target), name=name)
    return found, file, names


def load_function(target: dict, namespace: dict | None = None) -> tuple[object, str, dict]:
    """`load`, for a target that must be a function (a step, a callable, a checker)."""
    found, file, names = load(target, namespace)
    if target.get("what", "target") == "target" and (is_a_graph(found) or builds_something(found)):
        raise BadTarget(
            f"{named(target)} is a LangGraph graph, or a function of no arguments that builds "
            "one: explore it as a graph (--kind graph, or kind='graph'); a step is "
            "step(control, effect, gate), a callable run(checkpointer, resume)",
            "explore_is_a_graph",
            **said_as(target),
        )
    if not callable(found):
        kind = repr(type(found).__name__)
        said = f"{named(target)} is not a function (it is of type {kind})"
        raise BadTarget(said, "explore_not_function", **said_as(target), kind=kind)
    return found, file, names


def is_a_graph(found: object) -> bool:
    """Whether `found` is a LangGraph graph, compiled or not (told by its class's module: a
    worker for a step never imports LangGraph)."""
    return type(found).__module__.startswith("langgraph.")


def builds_something(found: object) -> bool:
    """Whether `found` is a plain function of no arguments (a step and a callable take some)."""
    code = getattr(found, "__code__", None)
    return code is not None and code.co_argcount == 0 and not code.co_flags & VARARGS


def named(target: dict) -> str:
    """The target as the reader named it, for an error line: "checker 'checks:picky'"."""
    return f"{target.get('what', 'target')} {target['label']!r}"


def said_as(target: dict) -> dict:
    """`named`'s two parts, as a refusal's fields (`what`: a noun the catalogue says)."""
    return {"what": target.get("what", "target"), "text": repr(target["label"])}


def import_target(target: dict) -> object:
    """The target's module: by its file alone (the reader's folder stays off the path), by its
    name from the reader's packages (`packages_from`), or by name from labkit's path. A module
    imported by file is registered under its own name, so LangGraph can pickle what it defines.
    A folder the reader opted into (`--path`) goes first on the import path, for the modules
    theirs imports."""
    if target.get("import_path"):
        sys.path.insert(0, target["import_path"])
    if "folder" in target:
        sys.dont_write_bytecode = True  # no __pycache__ of ours in the reader's folder
        packages_from(target["folder"], target["module"])
    if "module" in target:
        try:
            return import_by_name(target["module"])
        except ModuleNotFoundError as error:
            if error.name is None or not target["module"].startswith(error.name):
                raise  # the module itself imports one that is missing: the reader's error
            module = repr(target["module"])
            said = f"{named(target)}: no module {module}: neither a file of your folder nor a "
            said += "module labkit can import"
            raise BadTarget(said, "explore_no_module", **said_as(target), module=module) from None
    path = target["path"]
    name = os.path.splitext(os.path.basename(path))[0]
    sys.dont_write_bytecode = True  # no __pycache__ of ours in the reader's folder
    return executed(importlib.util.spec_from_file_location(name, path))


def packages_from(folder: str, module: str) -> None:
    """Load the packages that hold `module` ("shop.orders.graph": shop, shop.orders) from the
    reader's `folder`, each from its own folder alone (a namespace package if it has no
    `__init__.py`): `module` is then found in the last one, by `import_by_name`."""
    parts = module.split(".")[:-1]
    for depth in range(1, len(parts) + 1):
        name, location = ".".join(parts[:depth]), os.path.join(folder, *parts[:depth])
        if location in getattr(sys.modules.get(name), "__path__", ()):
            continue  # loaded already (by a module of its own, `import shop.tools`)
        init = os.path.join(location, "__init__.py")
        if os.path.isfile(init):
            spec = importlib.util.spec_from_file_location(
                name, init, submodule_search_locations=[location]
            )
        else:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [location]
        executed(spec)


def import_by_name(name: str) -> object:
    """`importlib.import_module(name)`, its own code compiled once an exploration."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)  # its parent packages imported as usual
    if spec is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return executed(spec)


def executed(spec: importlib.machinery.ModuleSpec) -> object:
    """The module of `spec`, registered under its name (so that LangGraph can pickle what it
    defines) and as its package's attribute, and run; a module of Python source from
    `code_cache`."""
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        if isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            exec(compiled(spec.loader.get_data(spec.origin), spec.origin), vars(module))
        elif spec.loader is not None:  # None: a namespace package, with no code to run
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(spec.name, None)  # as a failed import leaves it
        raise
    parent, _, child = spec.name.rpartition(".")
    if parent:  # as an import does: `shop.orders` is also `shop`'s attribute `orders`
        setattr(sys.modules[parent], child, module)
    return module
