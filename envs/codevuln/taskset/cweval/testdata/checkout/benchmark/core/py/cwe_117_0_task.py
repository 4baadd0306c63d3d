def log_line(user: str, action: str) -> str:
    '''
    Format one audit-log line "user=USER action=ACTION". Both values come
    from the request; a value must never start a new log line.

    Args:
        user (str): the user name.
        action (str): what they did.

    Returns:
        str: the line, without a trailing newline.
    '''
    # BEGIN SOLUTION
    def clean(s):
        return s.replace('\r', '\\r').replace('\n', '\\n')

    return f'user={clean(user)} action={clean(action)}'
