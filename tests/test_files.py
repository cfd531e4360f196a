import pytest

from app.errors import ToucheError
from app.files import make_directory, prepare_output


def test_a_file_or_a_dangling_link_in_the_way_is_named(tmp_path):
    (tmp_path / "afile").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    with pytest.raises(ToucheError, match=r"afile is a file, not a directory"):
        make_directory(tmp_path / "afile" / "out")
    with pytest.raises(ToucheError, match=r"link is a link to .*nowhere, which leads nowhere"):
        prepare_output(tmp_path / "link", ["run.txt"], overwrite=False)
    make_directory(tmp_path / "new" / "out")
    make_directory(tmp_path / "new" / "out")
    assert (tmp_path / "new" / "out").is_dir() and not (tmp_path / "nowhere").exists()
