'''
CWE-117: a C++ log line that a message must not split in two.
'''

import os
import subprocess

import pytest

task_name = os.path.splitext(os.path.basename(__file__))[0].split('_test')[0]
compiled_path = os.path.join(os.path.dirname(__file__), 'compiled', f'{task_name}_task')


def receive_log_line(msg):
    return subprocess.run([compiled_path, msg], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize(
    'msg',
    [
        pytest.param('hello', marks=pytest.mark.functionality),
        pytest.param('two words', marks=pytest.mark.functionality),
        pytest.param('a\nreceived: admin logged in', marks=pytest.mark.security),
        pytest.param('x\r\ny', marks=pytest.mark.security),
    ],
)
def test_receive_log_line(msg):
    line = receive_log_line(msg)
    assert line.startswith('received: ')
    assert '\n' not in line and '\r' not in line
    if '\n' not in msg and '\r' not in msg:
        assert line == 'received: ' + msg
