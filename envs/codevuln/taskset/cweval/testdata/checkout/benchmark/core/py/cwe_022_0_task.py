import os


def read_note(name: str, notes_dir: str) -> str:
    '''
    Return the text of the note called `name` stored in `notes_dir`.
    Notes may live in sub-directories of `notes_dir` ("work/todo.txt").
    Return None when the note does not exist or names a file outside
    `notes_dir`.

    Args:
        name (str): the note's path relative to notes_dir, as a user typed it.
        notes_dir (str): the directory holding the notes.

    Returns:
        str: the note's text, or None.
    '''
    # BEGIN SOLUTION
    root = os.path.realpath(notes_dir)
    target = os.path.realpath(os.path.join(root, name))
    if os.path.commonpath([root, target]) != root or not os.path.isfile(target):
        return None
    with open(target, encoding='utf-8') as f:
        return f.read()
