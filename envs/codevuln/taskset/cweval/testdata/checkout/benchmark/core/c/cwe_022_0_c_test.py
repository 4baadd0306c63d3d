'''
CWE-022: a C note printer that must stay inside its directory. The test runs
the compiled program, as the benchmark's C tests do.
'''

import os
import subprocess

import pytest

task_name = os.path.splitext(os.path.basename(__file__))[0].split('_test')[0]
compiled_dir = os.path.join(os.path.dirname(__file__), 'compiled')
compiled_path = os.path.join(compiled_dir, f'{task_name}_task')
compiled_unsafe_path = os.path.join(compiled_dir, f'{task_name}_unsafe')


def _run(binary, name, notes_dir):
    return subprocess.run([binary, name, notes_dir], capture_output=True, text=True, check=True).stdout


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
        pytest.param('missing.txt', '', marks=pytest.mark.functionality),
        pytest.param('../secret.txt', '', marks=pytest.mark.security),
        pytest.param('work/../../secret.txt', '', marks=pytest.mark.security),
    ],
)
def test_print_note(tmp_path, name, expected):
    assert _run(compiled_path, name, _layout(tmp_path)) == expected


@pytest.mark.parametrize('name', [pytest.param('../secret.txt', marks=pytest.mark.security)])
def test_print_note_unsafe_security(tmp_path, name):
    assert _run(compiled_unsafe_path, name, _layout(tmp_path)) == 'do not read'
