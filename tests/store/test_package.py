"""The package's names load on first use (`store/__init__.py`): each one it exports must resolve."""

import subprocess
import sys

import pytest

import evidenceqa.store as store


@pytest.mark.parametrize("name", store.__all__)
def test_every_exported_name_resolves(name: str) -> None:
    assert getattr(store, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'open_shop'"):
        store.open_shop  # noqa: B018


def test_importing_the_package_loads_no_database_code() -> None:
    code = "import sys, evidenceqa.store; print(any(m.split('.')[0] == 'sqlalchemy' for m in sys.modules))"
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "False"
    )
