"""Who may use the page: the start token, the cookie, the loopback Host, same-origin writes."""

from __future__ import annotations

from pathlib import Path

from webpage import WebPage, commits, start_web, stop_web

FACT = "The staging database moved to db2 on Tuesday"


def test_the_start_line_is_one_loopback_url_with_a_token(web: WebPage) -> None:
    assert web.start_url.startswith(f"http://127.0.0.1:{web.port}/?token=")
    assert len(web.start_url.split("token=", 1)[1]) >= 24


def test_no_token_no_cookie_is_refused_with_no_store_data(web: WebPage) -> None:
    for path in ("/", "/search?q=staging", "/entry?id=global-sem-0001", "/static/style.css"):
        answer = web.get(path, cookie=False)
        assert answer.status == 401, path
        assert "staging" not in answer.text and "db2" not in answer.text


def test_a_wrong_token_is_refused(web: WebPage) -> None:
    answer = web.get("/?token=not-the-token", cookie=False)
    assert answer.status == 403
    assert "set-cookie" not in answer.headers


def test_the_token_sets_a_strict_httponly_cookie_and_leaves_the_address(web: WebPage) -> None:
    answer = web.get(web.start_url[len(web.origin):] + "&x=1", cookie=False)
    assert answer.status == 303
    assert answer.headers["location"] == "/?x=1"
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert web.start_url.split("token=", 1)[1] not in cookie  # the cookie is not the token itself


def test_a_foreign_host_is_refused_even_with_the_cookie(web: WebPage) -> None:
    for host in (f"evil.example:{web.port}", f"127.0.0.1.nip.io:{web.port}", f"127.0.0.1:{web.port + 1}"):
        answer = web.get("/", headers={"Host": host})
        assert answer.status == 421, host
        assert "staging" not in answer.text
    assert web.get("/", headers={"Host": f"localhost:{web.port}"}).status == 200


def test_every_answer_carries_a_strict_content_security_policy(web: WebPage) -> None:
    for path in ("/", "/browse", "/search?q=db2", "/static/app.js"):
        answer = web.get(path)
        assert answer.status == 200, path
        csp = answer.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe" not in csp
        assert answer.headers["x-content-type-options"] == "nosniff"
    html = web.get("/").text
    assert "http://" not in html.replace(web.origin, "") and "https://" not in html  # nothing from elsewhere


def test_a_cross_origin_or_tokenless_post_changes_nothing(web: WebPage) -> None:
    before = commits(web.root)
    form = {"id": "global-sem-0001"}
    refused = [
        web.post("/entry/forget", form, origin="http://evil.example"),
        web.post("/entry/forget", form, origin=None),
        web.post("/entry/forget", form, csrf=None),
        web.post("/entry/forget", form, csrf="0" * 64),
    ]
    assert [a.status for a in refused] == [403] * 4
    assert commits(web.root) == before
    assert "**Forgotten:**" not in (web.root / "global/semantic/infra.md").read_text()
    done = web.post("/entry/forget", form)
    assert done.status == 303
    assert commits(web.root)[0] == "forget: global-sem-0001"


def test_the_page_listens_on_loopback_only(web_store: Path) -> None:
    import socket

    page = start_web(web_store)
    try:
        outside = [a for a in {i[4][0] for i in socket.getaddrinfo(socket.gethostname(), None)}
                   if not a.startswith(("127.", "::1"))]
        for address in outside:
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.settimeout(2)
                assert probe.connect_ex((address, page.port)) != 0, address
    finally:
        stop_web(page)
