"""The house's import rules, written out for import-linter from the one list of apps (config/apps.py)
and the modules on disk: `make lint` runs `python -m config.import_rules var/importlinter.ini`, then
`lint-imports` on that file. A new app is covered once it is installed; a new module once it is given
a tier below (until then this refuses to write the rules and says which module).

The rules (README, "Layout"):
- An app's doors (endpoints, pages, the admin, commands, tasks, the AppConfig, migrations) are the
  top floor: they may import any app's domain code. Domain code never imports a door.
- The apps' domain code goes downwards only, floor by floor (config/apps.py): no circle of files.
- Within an app, its doors above its services above its helpers above its models above the engine.
- The verification engine is plain Python: nothing of Django, DRF or any app.
- Only HTTP doors use apikit/ (the API's kit): services, models and tasks speak no HTTP.
- The app imports neither its tests nor its benchmarks; tests/support, which serves both, imports
  no test module; bench/ takes tests/support and nothing else of the suite.

Stdlib only: it runs before anything of Django is set up.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

from config.apps import FLOORS, PACKAGES

ROOT = Path(__file__).resolve().parent.parent
# A door, by its module's first name inside the app (any `*_views` and `*_apis` too).
DOORS = frozenset(
    {
        "admin", "apis", "views", "webhooks", "urls", "portal_urls", "forms", "serializers", "schema",
        "decorators", "widget", "templatetags", "middleware", "management", "tasks", "apps", "migrations",
    }
)  # fmt: skip
# Doors that are not HTTP: they may not use apikit/ either.
NOT_HTTP_DOORS = frozenset({"management", "tasks", "apps", "migrations"})
# The tiers of an app's domain code, from the top; every domain module's first name is in one.
TIERS: tuple[tuple[str, ...], ...] = (
    (
        "services", "evaluation", "notifications", "receipt_pdf", "receipts", "quotes", "payments",
        "subscriptions", "fulfilment", "ledger", "two_factor", "worker", "chunk_runs", "splitting",
        "estimates", "previews", "deep_slots", "grouping", "lifecycle", "retention", "callbacks",
        "downloads", "original_file", "fair_share", "breakdown_charts", "resolver", "resolution", "deep",
        "deep_requests", "judging", "canaries", "login_throttle", "spend_caps", "keys", "key_limits",
        "outcomes", "erasure", "business", "dashboard", "probes", "auditing", "mode_choice", "guarantee",
        "guarantee_report", "exports", "export_build", "export_contents",
    ),
    (
        "queue", "gateway", "prices", "files", "result_rows", "csvfile", "converters", "plans",
        "permissions", "origins", "egresses", "egress_checks", "reports", "esp", "metrics", "machine", "sns",
        "signatures",
    ),
    ("models",),
    ("engine",),
)  # fmt: skip
# Packages whose modules are all of one kind, with no tiers inside: lib/ (plain helpers, the ground
# floor) and apikit/ (the API's HTTP kit: authentication, throttles, errors, idempotency, the schema).
UNTIERED = frozenset({"lib", "apikit"})
ENGINE = "verification.engine"


def modules(package: str) -> Iterator[str]:
    """Every module of a package on disk, dotted, the package's own name first."""
    base = ROOT / package
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if "." not in "".join(parts) and not parts[-1].endswith(".conf"):
            yield ".".join(parts)


def first_name(module: str) -> str:
    """The module's name inside its app: `jobs.models.x` is `models`."""
    return module.split(".")[1]


def is_door(module: str) -> bool:
    name = first_name(module)
    return name in DOORS or name.endswith(("_views", "_apis"))


def tier_of(module: str) -> int:
    name = first_name(module)
    for index, tier in enumerate(TIERS):
        if name in tier:
            return index
    raise SystemExit(f"config/import_rules.py: give {module} a door name or a tier in TIERS")


def inside(package: str) -> list[str]:
    """The package's modules but the package itself."""
    return [module for module in modules(package) if module != package]


def rules() -> str:
    apps = [package for package in PACKAGES if package not in UNTIERED]
    doors = [m for app in PACKAGES if app != "lib" for m in inside(app) if app != "apikit" and is_door(m)]
    domain = [m for app in apps for m in inside(app) if not is_door(m)]
    for module in domain:
        tier_of(module)  # refuses an unplaced module
    tests = sorted({m.split(".")[1] for m in inside("tests") if m.count(".") >= 1})
    test_packages = [f"tests.{name}" for name in tests if name not in {"support", "conftest", "factories"}]
    sections = [
        _header(),
        _contract(
            "apps import downwards only: their domain code forms no circle, lib at the bottom",
            type="layers",
            layers=["config", *(" | ".join(floor) for floor in FLOORS)],
            ignore_imports=[f"{door} -> **" for door in doors],
            unmatched_ignore_imports_alerting="none",
        ),
        _contract(
            "the doors are the top floor: domain code imports no endpoint, page, admin, command or task",
            type="forbidden",
            source_modules=domain + inside("lib"),
            forbidden_modules=doors,
        ),
        _contract(
            "within each app: its doors above its services above its helpers above its models above the engine",
            type="layers",
            containers=apps,
            exhaustive="true",
            layers=_tiers([m for m in doors if m.split(".")[0] in apps], domain),
        ),
        _contract(
            "the verification engine is plain Python: nothing of Django, DRF or the apps",
            type="forbidden",
            source_modules=[ENGINE],
            forbidden_modules=[
                "django",
                "rest_framework",
                "django_q",
                "config",
                *(package for package in PACKAGES if package != "verification"),
                *(m for m in inside("verification") if m != ENGINE and not m.startswith(ENGINE + ".")),
            ],
        ),  # fmt: skip
        _contract(
            "only HTTP doors use apikit/: services, models, commands and tasks speak no HTTP",
            type="forbidden",
            source_modules=[
                m
                for app in PACKAGES
                if app != "apikit"
                for m in inside(app)
                if not is_door(m) or first_name(m) in NOT_HTTP_DOORS
            ],
            forbidden_modules=["apikit"],
            # An erasure deletes the address's idempotent replies too: apikit's store, not its HTTP.
            ignore_imports=["privacy.erasure -> apikit.models"],
        ),
        _contract(
            "the app imports neither its tests nor its benchmarks",
            type="forbidden",
            source_modules=["config", *PACKAGES],
            forbidden_modules=["tests", "bench"],
        ),
        _contract(
            "tests/support serves tests and benchmarks: it imports no test module, no benchmark but bench.procs",
            type="forbidden",
            source_modules=["tests.support"],
            forbidden_modules=["bench", "tests.conftest", *test_packages],
            # Starting and stopping processes is one module both use (bench/procs.py imports nothing of tests).
            ignore_imports=[
                "tests.support.live_stack -> bench.procs",
                "tests.support.db -> bench.procs",
                "tests.support.e2e_stack -> bench.procs",
                "tests.support.s3 -> bench.procs",
            ],
        ),
        _contract(
            "bench/ takes the support servers from tests/, never a test module, a fixture or a factory",
            type="forbidden",
            source_modules=["bench"],
            forbidden_modules=["tests.conftest", "tests.factories", *test_packages],
        ),
        _contract(
            "bench/procs.py, which tests/support uses, is plain: nothing of tests or the other benchmarks",
            type="forbidden",
            source_modules=["bench.procs"],
            forbidden_modules=["tests"],
        ),
    ]
    return "\n".join(sections)


def _tiers(doors: list[str], domain: list[str]) -> list[str]:
    """The per-app layers: the doors on top (siblings: `:`), then the tiers, each name in
    parentheses where not every app has it."""
    present = {first_name(module) for module in doors + domain}
    apps_having = {name: {m.split(".")[0] for m in doors + domain if first_name(m) == name} for name in present}
    containers = {m.split(".")[0] for m in domain}
    layers = []
    for tier in (tuple(sorted({first_name(door) for door in doors})), *TIERS):
        names = [name for name in tier if name in present]
        # `(x)`: not every app has x
        layers.append(" : ".join(name if apps_having[name] == containers else f"({name})" for name in names))
    return [layer for layer in layers if layer]


def _header() -> str:
    roots = "\n".join(f"    {package}" for package in ("config", *PACKAGES, "tests", "bench"))
    return (
        "# Written by config/import_rules.py (make lint): edit that, not this.\n"
        f"[importlinter]\nroot_packages =\n{roots}\ninclude_external_packages = true\n"
    )


_counter = iter(range(1, 100))


def _contract(name: str, **fields: object) -> str:
    lines = [f"[importlinter:contract:{next(_counter)}]", f"name = {name}"]
    for key, value in fields.items():
        if isinstance(value, list):
            lines.append(f"{key} =" + "".join(f"\n    {item}" for item in value))
        else:
            lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "var" / "importlinter.ini"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(rules())
    print(f"import rules for {len(PACKAGES)} packages written to {out}")


if __name__ == "__main__":
    main(sys.argv)
