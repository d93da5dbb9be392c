"""Reading C: preprocess with the system `cc -E` against the lifter's own small headers
(pycparser parses standard C only, not the system's extensions), parse with pycparser and
find the function to lift with its typedefs resolved."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pixelweave.nodes.lift.errors import LiftError
from pycparser import c_ast, c_parser

INCLUDE = Path(__file__).resolve().parent / "include"
RANGE_COMMENT = re.compile(r"//\s*lift:\s*(\w+)\s+in\s+(-?[\d.]+)\s*\.\.\s*(-?[\d.]+)")
# C base type names -> the lifter's element type names
BASE_TYPES = {
    ("char",): "i8",
    ("signed", "char"): "i8",
    ("unsigned", "char"): "u8",
    ("short",): "i16",
    ("short", "int"): "i16",
    ("signed", "short"): "i16",
    ("unsigned", "short"): "u16",
    ("unsigned", "short", "int"): "u16",
    ("int",): "i32",
    ("signed",): "i32",
    ("signed", "int"): "i32",
    ("unsigned",): "u32",
    ("unsigned", "int"): "u32",
    ("long",): "i64",
    ("long", "int"): "i64",
    ("long", "long"): "i64",
    ("long", "long", "int"): "i64",
    ("unsigned", "long"): "u64",
    ("unsigned", "long", "long"): "u64",
    ("float",): "f32",
    ("double",): "f64",
    ("void",): "void",
    ("__m128i",): "m128i",
}


@dataclass(frozen=True)
class CType:
    """A C type as the lifter sees it: a scalar element type, a pointer to one, or an array."""

    base: str  # u8 ... f64, void, m128i
    pointer: int = 0  # levels of indirection
    array: tuple[int, ...] = ()  # fixed array extents

    def describe(self) -> str:
        return self.base + "*" * self.pointer + "".join(f"[{n}]" for n in self.array)


@dataclass
class CFunction:
    """The function to lift, with what reading it needs: its file and the typedef table."""

    file: str
    name: str
    node: c_ast.FuncDef
    typedefs: dict[str, c_ast.Node]
    functions: dict[str, c_ast.FuncDef]
    ranges: dict[str, tuple[float, float]]


def preprocess(path: Path) -> str:
    """The file after `cc -E` with the lifter's headers (line markers kept for messages)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise LiftError(str(path), None, "the file", "no C compiler (`cc`) to preprocess it")
    command = [
        cc,
        "-E",
        "-nostdinc",
        "-I",
        str(INCLUDE),
        "-D__attribute__(x)=",
        "-Dinline=",
        "-Drestrict=",
        "-D__restrict=",
        str(path),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise LiftError(str(path), None, "the file", f"the preprocessor failed: {done.stderr.strip()[:400]}")
    return done.stdout


def parse_file(path: str | Path) -> dict[str, CFunction]:
    """Every function defined in a C file, by name."""
    path = Path(path)
    if not path.is_file():
        raise LiftError(str(path), None, "the file", "no such file")
    text = preprocess(path)
    try:
        unit = c_parser.CParser().parse(text, filename=str(path))
    except Exception as e:  # pycparser raises ParseError with "file:line:col: message"
        raise LiftError(str(path), None, "the file", f"pycparser could not parse it: {e}") from e
    typedefs: dict[str, c_ast.Node] = {}
    functions: dict[str, c_ast.FuncDef] = {}
    for item in unit.ext:
        if isinstance(item, c_ast.Typedef):
            typedefs[item.name] = item.type
        elif isinstance(item, c_ast.FuncDef):
            functions[item.decl.name] = item
    ranges = declared_ranges(path)
    return {n: CFunction(str(path), n, f, typedefs, functions, ranges) for n, f in functions.items()}


def declared_ranges(path: str | Path) -> dict[str, tuple[float, float]]:
    """Parameter ranges the file declares with `// lift: NAME in LO..HI` (the lifted code may
    rely on them, as the C code does; verification draws values from them)."""
    text = Path(path).read_text()
    return {m.group(1): (float(m.group(2)), float(m.group(3))) for m in RANGE_COMMENT.finditer(text)}


def find_function(path: str | Path, name: str) -> CFunction:
    """The named function of a C file, or a LiftError listing those there are."""
    functions = parse_file(path)
    if name not in functions:
        known = ", ".join(sorted(functions)) or "none"
        raise LiftError(str(path), None, f"function `{name}`", f"it is not defined in the file (defined: {known})")
    return functions[name]


def resolve_type(node: c_ast.Node, typedefs: dict[str, c_ast.Node], file: str) -> CType:
    """The CType of a declaration's type node."""
    pointer = 0
    array: list[int] = []
    while True:
        if isinstance(node, c_ast.PtrDecl):
            pointer += 1
            node = node.type
        elif isinstance(node, c_ast.ArrayDecl):
            if node.dim is None or not isinstance(node.dim, c_ast.Constant):
                raise LiftError(file, line_of(node), "an array declaration", "arrays need a constant size")
            array.append(int(node.dim.value.rstrip("uUlL"), 0))
            node = node.type
        elif isinstance(node, c_ast.TypeDecl):
            node = node.type
        elif isinstance(node, c_ast.IdentifierType):
            names = tuple(n for n in node.names if n not in ("const", "volatile"))
            if len(names) == 1 and names[0] in typedefs:
                inner = resolve_type(typedefs[names[0]], typedefs, file)
                return CType(inner.base, inner.pointer + pointer, tuple(array) + inner.array)
            if names == ("__m128i",):
                return CType("m128i", pointer, tuple(array))
            base = BASE_TYPES.get(names)
            if base is None:
                raise LiftError(file, line_of(node), f"type `{' '.join(names)}`", "not a scalar type the lifter knows")
            return CType(base, pointer, tuple(array))
        elif isinstance(node, c_ast.Struct):
            if node.name is None and node.decls and len(node.decls) == 1 and node.decls[0].name == "bytes":
                return CType("m128i", pointer, tuple(array))
            raise LiftError(file, line_of(node), "a struct", "structs are outside the lifted subset")
        elif isinstance(node, c_ast.Typename):
            node = node.type
        else:
            raise LiftError(file, line_of(node), type(node).__name__, "not a type the lifter knows")


def line_of(node: c_ast.Node | None) -> int | None:
    """The source line of a node (the original file's, thanks to the line markers)."""
    coord = getattr(node, "coord", None)
    return coord.line if coord is not None else None
