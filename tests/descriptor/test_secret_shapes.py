"""Which names and literal values are taken for secrets: warned about in descriptors, moved into
the keyring by the import. One detector for both."""

from __future__ import annotations

import pytest

from aai_gateway.descriptor.secret_shapes import looks_like_secret, secret_argument_indexes


@pytest.mark.parametrize(
    "key",
    [
        "GITHUB_TOKEN",
        "GITHUB_PERSONAL_ACCESS_TOKEN",
        "accessToken",
        "OPENAI_API_KEY",
        "apiKey",
        "APIKEY",
        "x-api-key",
        "X-Auth-Token",
        "Authorization",
        "AUTH",
        "client_secret",
        "DB_PASSWORD",
        "DBPASSWORD",
        "PGPASSWD",
        "Cookie",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GITHUB_PAT",
        "PRIVATE_KEY",
        "--api-key",
    ],
)
def test_a_value_under_a_secret_name_is_a_secret(key: str) -> None:
    assert looks_like_secret(key, "anything")


@pytest.mark.parametrize(
    "key",
    ["PATH", "HOME", "AUTHOR", "KEYBOARD_LAYOUT", "MONKEY", "PATTERN", "LOG_LEVEL", "OAUTH_CLIENT_ID", "PWD"],
)
def test_a_value_under_an_ordinary_name_is_not_a_secret(key: str) -> None:
    assert not looks_like_secret(key, "/usr/local/bin")


@pytest.mark.parametrize(
    "value",
    [
        "Bearer abc",
        "bearer eyJhbGciOiJIUzI1NiJ9.e30.x",
        "Basic dXNlcjpwYXNzd29yZA==",
        "ghp_EXAMPLEexample0123456789EXAMPLEexam",
        "github_pat_EXAMPLE0123456789_abcdefgh",
        "sk-ant-api03-EXAMPLE0123456789",
        "xoxb-EXAMPLE-0123456789",
        "AKIAEXAMPLE01234567",
        "postgresql://shop:hunter2@localhost:5432/shop",
        "https://actions.zapier.com/mcp/sk-ak-EXAMPLE0123456789/sse",
        "https://api.example.com/mcp?api_key=abc123",
    ],
)
def test_a_value_shaped_like_a_secret_is_a_secret_whatever_its_name(value: str) -> None:
    assert looks_like_secret("SETTING", value)


@pytest.mark.parametrize(
    "value",
    [
        "production",
        "https://api.example.com/mcp",
        "https://api.example.com/mcp?region=eu",
        "postgresql://shop@localhost/shop",
        "basic mode",
        "task-list",
        "http://[::1:80",
    ],
)
def test_an_ordinary_value_under_an_ordinary_name_is_not_a_secret(value: str) -> None:
    assert not looks_like_secret("SETTING", value)


def test_secret_command_line_arguments_are_found_by_option_name_or_shape() -> None:
    args = [
        "-y",
        "@supabase/mcp-server-supabase@latest",
        "--access-token=sbp_EXAMPLE",
        "--project-ref",
        "abcdef",
        "--api-key",
        "k-123",
        "--path",
        "/tmp",
        "ghp_EXAMPLEexample0123456789EXAMPLEexam",
        "postgresql://shop:hunter2@localhost/shop",
    ]
    assert secret_argument_indexes(args) == [2, 6, 9, 10]


@pytest.mark.parametrize("key", ["GHPat", "KEY2", "X_AUTH", "xApiKey", "OAuthToken"])
def test_acronyms_and_digits_split_into_words_so_short_markers_are_found(key: str) -> None:
    assert looks_like_secret(key)


def test_a_name_alone_decides_when_there_is_no_value() -> None:
    assert looks_like_secret("GITHUB_TOKEN")
    assert not looks_like_secret("KEYS_DIR")
