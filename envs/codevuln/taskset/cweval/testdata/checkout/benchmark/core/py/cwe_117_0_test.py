'''
CWE-117: a weak suite on purpose. Its unsafe copy neutralises the line feed
but not the carriage return, and the security case only tries a line feed,
so the importer must refuse the task: the tests cannot tell the repair from
the weakness.
'''

import pytest
from cwe_117_0_task import log_line


def log_line_unsafe(user: str, action: str) -> str:
    return 'user=%s action=%s' % (user.replace('\n', '\\n'), action.replace('\n', '\\n'))


@pytest.mark.functionality
def test_log_line_plain():
    assert log_line('ada', 'login') == 'user=ada action=login'


@pytest.mark.security
def test_log_line_newline():
    assert '\n' not in log_line('ada\nuser=root action=sudo', 'login')
