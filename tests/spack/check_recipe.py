#!/usr/bin/env python3
"""Checks spack/package.py as far as a machine without Spack allows.

Usage: check_recipe.py RECIPE CMAKE_FILE...

  - RECIPE parses (ast) and defines a CMakePackage subclass after
    `from spack.package import *`;
  - its class body runs against a small stand-in for spack.package that
    records the directives it calls (version, variant, depends_on,
    requires, conflicts) the way Spack's take them;
  - it has the variants papi, fortran and html and depends on mpi, otf2,
    libunwind, elfutils, and on papi with +papi;
  - cmake_args, for every combination of the variants, defines only
    options that the CMAKE_FILEs declare (option() or a CACHE variable),
    and each variant switches exactly one of them between ON and OFF:
    papi ADAPTRACE_PAPI, fortran ADAPTRACE_FORTRAN, html
    ADAPTRACE_REPORT_HTML.
Exit status 0 when everything holds, 1 otherwise (each failure said once).
"""
import ast
import itertools
import re
import sys
import types

# Each variant and the option of cmake/options.cmake it switches.
REQUIRED_VARIANTS = {"papi": "ADAPTRACE_PAPI", "fortran": "ADAPTRACE_FORTRAN", "html": "ADAPTRACE_REPORT_HTML"}
REQUIRED_DEPENDENCIES = {"mpi": None, "otf2": None, "libunwind": None, "elfutils": None, "papi": "+papi"}


class Spec:
    """The part of a concrete spec that cmake_args reads: its variants."""

    def __init__(self, variants):
        self.variants = {name: types.SimpleNamespace(value=value) for name, value in variants.items()}

    def satisfies(self, constraint):
        return all(self._holds(part) for part in constraint.split())

    def __contains__(self, constraint):
        return self.satisfies(constraint)

    def _holds(self, part):
        if part[0] in "+~":
            return self.variants[part[1:]].value == (part[0] == "+")
        raise ValueError(f"the stand-in spec only knows +variant and ~variant, not {part!r}")


def fake_spack_package(directives):
    """A module standing in for spack.package: the directives record their
    calls in directives[name]; CMakePackage defines as Spack's CMakeBuilder
    does (booleans as BOOL ON/OFF, strings as STRING)."""
    module = types.ModuleType("spack.package")

    def recorder(name):
        def directive(*args, **kwargs):
            directives.setdefault(name, []).append((args, kwargs))
        return directive

    for name in ("version", "variant", "depends_on", "requires", "conflicts", "maintainers", "license",
                 "provides", "patch", "resource"):
        setattr(module, name, recorder(name))

    class CMakePackage:
        run_tests = False

        def __init__(self, spec):
            self.spec = spec

        @staticmethod
        def define(name, value):
            if isinstance(value, bool):
                return f"-D{name}:BOOL={'ON' if value else 'OFF'}"
            if isinstance(value, (list, tuple)):
                value = ";".join(str(item) for item in value)
            return f"-D{name}:STRING={value}"

        def define_from_variant(self, name, variant=None):
            variant = variant or name.lower()
            if variant not in self.spec.variants:
                raise KeyError(f"define_from_variant({name!r}, {variant!r}): the package has no variant {variant!r}")
            return self.define(name, self.spec.variants[variant].value)

    module.CMakePackage = CMakePackage
    module.__all__ = [name for name in vars(module) if not name.startswith("_")]
    return module


def declared_options(cmake_files):
    options = set()
    for path in cmake_files:
        with open(path) as stream:
            text = stream.read()
        options.update(re.findall(r"^\s*option\(\s*(\w+)", text, re.M))
        options.update(re.findall(r"^\s*set\(\s*(\w+)\s[^)]*\bCACHE\b", text, re.M))
    return options


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    recipe, cmake_files = argv[1], argv[2:]
    problems = []
    with open(recipe) as stream:
        source = stream.read()
    tree = ast.parse(source, recipe)
    imports_spack = any(isinstance(node, ast.ImportFrom) and node.module == "spack.package"
                        and [alias.name for alias in node.names] == ["*"] for node in tree.body)
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)
               and any(isinstance(base, ast.Name) and base.id == "CMakePackage" for base in node.bases)]
    if not imports_spack:
        problems.append("no `from spack.package import *`")
    if len(classes) != 1:
        return report([f"{len(classes)} CMakePackage classes, expected one"] + problems)

    directives = {}
    sys.modules["spack"] = types.ModuleType("spack")
    sys.modules["spack.package"] = fake_spack_package(directives)
    namespace = {"__name__": "adaptrace_recipe"}
    exec(compile(tree, recipe, "exec"), namespace)
    package_class = namespace[classes[0].name]

    variants = {args[0]: kwargs.get("default", True) for args, kwargs in directives.get("variant", [])}
    missing_variants = set(REQUIRED_VARIANTS) - set(variants)
    if missing_variants:
        problems.append(f"no variant {', '.join(sorted(missing_variants))}")
    if not directives.get("version"):
        problems.append("no version")
    dependencies = {}
    for args, kwargs in directives.get("depends_on", []):
        name = re.match(r"[\w-]+", args[0]).group(0)
        dependencies[name] = kwargs.get("when")
    for name, when in REQUIRED_DEPENDENCIES.items():
        if name not in dependencies:
            problems.append(f"no depends_on({name!r})")
        elif dependencies[name] != when:
            problems.append(f"depends_on({name!r}) when={dependencies[name]!r}, expected when={when!r}")

    options = declared_options(cmake_files)
    switched = {}
    names = sorted(variants)
    for values in itertools.product([False, True], repeat=len(names)):
        arguments = package_class(Spec(dict(zip(names, values)))).cmake_args()
        defined = {}
        for argument in arguments:
            match = re.fullmatch(r"-D(\w+)(?::\w+)?=(.*)", argument)
            if match is None:
                problems.append(f"cmake_args gives {argument!r}, not -DNAME[:TYPE]=VALUE")
                continue
            defined[match.group(1)] = match.group(2)
        for name in sorted(set(defined) - options):
            problems.append(f"cmake_args defines {name}, which is no option of {', '.join(cmake_files)}")
        for position, variant in enumerate(names):
            if values[position]:
                continue
            flipped = dict(zip(names, values))
            flipped[variant] = True
            flipped_arguments = package_class(Spec(flipped)).cmake_args()
            changed = sorted(set(arguments) ^ set(flipped_arguments))
            switched.setdefault(variant, set()).add(tuple(changed))
    for variant in names:
        for changed in switched.get(variant, ()):
            pairs = {re.fullmatch(r"-D(\w+)(?::\w+)?=(.*)", argument).groups() for argument in changed}
            option_names = {name for name, _ in pairs}
            if len(option_names) != 1 or {value for _, value in pairs} != {"ON", "OFF"}:
                problems.append(f"variant {variant} does not switch one CMake option between OFF and ON "
                                f"(it changes {list(changed)})")
                break
            if variant in REQUIRED_VARIANTS and option_names != {REQUIRED_VARIANTS[variant]}:
                problems.append(f"variant {variant} switches {option_names.pop()}, not {REQUIRED_VARIANTS[variant]}")
                break
    return report(problems)


def report(problems):
    for problem in dict.fromkeys(problems):
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
