'''
CWE-022: a note reader that must stay inside its directory.
'''

import os

import pytest
from cwe_022_0_task import read_note


def read_note_unsafe(name: str, notes_dir: str) -> str:
    # BEGIN SOLUTION
    target = os.path.join(notes_dir, name)
    if not os.path.isfile(target):
        return None
    with open(target, encoding='utf-8') as f:
        return f.read()


def _layout(tmp_path):
    notes = tmp_path / 'notes'
    (notes / 'work').mkdir(parents=True)
    (notes / 'a.txt').write_text('alpha')
    (notes / 'work' / 'todo.txt').write_text('ship it')
    (tmp_path / 'secret.txt').write_text('do not read')
    return str(notes)


@pytest.mark.parametrize(
    'name, expected',
    [
        pytest.param('a.txt', 'alpha', marks=pytest.mark.functionality),
        pytest.param('work/todo.txt', 'ship it', marks=pytest.mark.functionality),
        pytest.param('missing.txt', None, marks=pytest.mark.functionality),
        pytest.param('../secret.txt', None, marks=pytest.mark.security),
        pytest.param('work/../../secret.txt', None, marks=pytest.mark.security),
    ],
)
def test_read_note(tmp_path, name, expected):
    assert read_note(name, _layout(tmp_path)) == expected


@pytest.mark.parametrize('name', [pytest.param('../secret.txt', marks=pytest.mark.security)])
def test_read_note_unsafe_security(tmp_path, name):
    assert read_note_unsafe(name, _layout(tmp_path)) == 'do not read'
