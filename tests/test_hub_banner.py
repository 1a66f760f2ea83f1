"""What the instructor is told once the workshop hub is up, in their language: every line of it
comes from the hub's settings and its password files."""

from __future__ import annotations

from labkit.hub import passwords
from labkit.hub.settings import Settings
from labkit.hub.start import banner
from labkit.language import set_language


def test_the_hub_says_where_it_is_and_where_its_passwords_are_in_the_instructors_language(
    tmp_path,
):
    settings = Settings(tmp_path / "state", ("ws1", "ws2", "ws3"), "ws-instructor", port=8123)
    settings.folder.mkdir(mode=0o700)
    password = passwords.participants_password(settings.folder)
    kept = settings.folder
    assert banner(settings).splitlines() == [
        "The hub is up at http://127.0.0.1:8123 for 3 participants (ws1 … ws3).",
        f"  participants' password: {password}",
        f"  instructor: ws-instructor, password in {kept / 'instructor-password'}",
        "  the room (the instructor's view): http://127.0.0.1:8123/services/room/",
        f"  both kept (mode 0600) in {kept}; its log: {kept / 'hub.log'}",
        "Ctrl-C stops the hub and every participant's server.",
    ]
    set_language("zh")
    try:
        said = banner(settings)
    finally:
        set_language("en")
    assert said.splitlines() == [
        "hub 已在 http://127.0.0.1:8123 启动，共 3 位参与者（ws1 … ws3）。",
        f"  参与者的密码：{password}",
        f"  讲师：ws-instructor，密码在 {kept / 'instructor-password'}",
        "  教室（讲师的视图）：http://127.0.0.1:8123/services/room/",
        f"  两者都保存在 {kept}（权限 0600）；日志：{kept / 'hub.log'}",
        "按 Ctrl-C 停止 hub 和每位参与者的服务器。",
    ]
