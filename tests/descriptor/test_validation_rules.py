"""Each validation rule, broken alone in an otherwise valid descriptor, is reported at its JSON pointer.

Every test starts from one of the valid descriptors in `helpers` and changes one thing, so the
problem list must hold exactly the one error the rule produces (warnings are checked separately).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from aai_gateway.descriptor import load_descriptor
from aai_gateway.errors import DescriptorError, ErrorCode

from .helpers import (
    DELETE,
    JsonDict,
    error_pointers,
    load,
    only_error,
    read_fixture,
    rendered,
    source,
    valid_a,
    valid_b,
    valid_c,
    with_changes,
)


def rejected_at(document: JsonDict | str | bytes, pointer: str, *words: str, host: Any = "linux") -> str:
    """Load, expect exactly one error at `pointer` whose message contains every word; return the message."""
    problem = only_error(load(document, host))
    assert problem.pointer == pointer, problem.render()
    for word in words:
        assert word in problem.message, problem.render()
    return problem.message


def test_the_valid_starting_points_load_without_any_problem() -> None:
    for document in (valid_a("macos"), valid_a("web"), valid_a("linux"), valid_a("windows"), valid_b()):
        result = load(document)
        assert result.descriptor is not None
        assert result.problems == [], rendered(result)
    for document in (valid_c("web"), valid_c("macos")):
        result = load(document)
        assert result.descriptor is not None
        assert result.problems == [], rendered(result)


# --------------------------------------------------------------------------- JSON text


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{\n  "schemaVersion": "1.0",\n  "version": \n}', "line 4 column 1"),
        ('{"schemaVersion": "1.0",}', "line 1 column 25"),
        ('{\n\n   "a" "b"}', "line 3 column 8"),
        ("", "line 1 column 1"),
        ('{"a": 1} trailing', "line 1 column 10"),
    ],
)
def test_bad_json_is_reported_at_the_root_with_line_and_column(text: str, where: str) -> None:
    message = rejected_at(text, "", "invalid JSON", where)

    assert message.startswith("invalid JSON at ")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_json_number_literals_are_rejected(literal: str) -> None:
    rejected_at('{"schemaVersion": "1.0", "x": ' + literal + "}", "", "invalid JSON", literal)


@pytest.mark.parametrize("number", ["1e999", "-1e999", "1E400"])
def test_a_number_too_large_for_a_float_is_rejected_where_it_is_written(number: str) -> None:
    text = json.dumps(valid_c("linux")).replace(
        '"type": "apple-events"', f'"type": "stdio", "timeout": {number}'
    )

    rejected_at(text, "/execution/timeout", "too large")


@pytest.mark.parametrize(
    ("escape", "pointer"),
    [
        ('"Notes"', "/app/name/en"),
        ('"search"', "/tools/0/name"),
        ('"string"', "/tools/0/parameters/properties/query/type"),
        ('"application/json"', "/execution/defaultHeaders/Accept"),
    ],
)
def test_a_string_with_a_lone_surrogate_escape_is_rejected_where_it_is_written(
    escape: str, pointer: str
) -> None:
    text = json.dumps(valid_c("web")).replace(escape, escape[:-1] + '\\ud800"', 1)

    message = rejected_at(text, pointer, "not valid Unicode text", "\\ud800")
    message.encode("utf-8")


def test_a_key_with_a_lone_surrogate_escape_is_rejected_at_its_object() -> None:
    text = json.dumps(valid_c("web")).replace('"query": {', '"query\\udc00": {', 1)

    rejected_at(text, "/tools/0/parameters/properties", "key", "not valid Unicode text")


def test_a_properly_paired_surrogate_escape_is_an_ordinary_character() -> None:
    text = json.dumps(valid_c("web")).replace('"Notes"', '"Notes \\ud83d\\udcdd"', 1)

    descriptor = load(text).descriptor
    assert descriptor is not None
    assert descriptor.names.primary == "Notes \U0001f4dd"


def test_bytes_that_are_not_utf8_are_rejected_with_the_byte_offset() -> None:
    rejected_at(b'{"a": "\xff"}', "", "not UTF-8", "byte 7")


def test_a_utf8_byte_order_mark_is_accepted() -> None:
    result = load(b"\xef\xbb\xbf" + json.dumps(valid_c()).encode())

    assert result.descriptor is not None
    assert result.problems == []


def test_a_file_larger_than_the_limit_is_rejected_before_parsing() -> None:
    from aai_gateway.descriptor.limits import MAX_DESCRIPTOR_BYTES

    rejected_at(b" " * (MAX_DESCRIPTOR_BYTES + 1), "", "bytes", "limited")


def test_json_nested_deeper_than_the_limit_is_rejected() -> None:
    document = with_changes(valid_c(), ("/x-deep", json.loads("[" * 80 + "]" * 80)))

    rejected_at(document, "", "nested too deeply")


@pytest.mark.parametrize(
    ("text", "kind"),
    [("[]", "an array"), ('"aai"', "a string"), ("null", "null"), ("1", "a number"), ("true", "a boolean")],
)
def test_a_root_that_is_not_an_object_is_rejected(text: str, kind: str) -> None:
    rejected_at(text, "", "must be a JSON object", kind)


@pytest.mark.parametrize("document", [{}, {"name": "Mail", "tools": []}, {"schemaversion": "1.0"}])
def test_a_document_of_no_known_dialect_is_rejected_with_the_markers_it_looks_for(document: JsonDict) -> None:
    rejected_at(
        document, "", "cannot tell which aai.json dialect", "schemaVersion", "appId", "schema_version"
    )


# --------------------------------------------------------------------------- duplicate keys


@pytest.mark.parametrize(
    ("document", "key", "pointer"),
    [
        (valid_a(), '"id": "com.example.notes"', "/app/id"),
        (valid_b(), '"appId": "com.example.notes"', "/appId"),
        (valid_c(), '"id": "com.example.notes"', "/app/id"),
        (valid_c(), '"type": "http"', "/execution/type"),
        (valid_b(), '"method": "Search"', "/platforms/linux/tools/0/method"),
    ],
)
def test_a_key_given_twice_in_one_object_is_reported_at_that_key(
    document: JsonDict, key: str, pointer: str
) -> None:
    text = json.dumps(document, ensure_ascii=False)
    assert key in text
    text = text.replace(key, f"{key}, {key}", 1)

    rejected_at(text, pointer, "appears more than once")


def test_a_duplicate_key_whose_name_holds_a_slash_is_reported_with_an_escaped_pointer() -> None:
    text = json.dumps(with_changes(valid_c(), ("/x-a~1b~0c", 1)))
    text = text.replace('"x-a/b~c": 1', '"x-a/b~c": 1, "x-a/b~c": 2')

    rejected_at(text, "/x-a~1b~0c", "appears more than once")


# --------------------------------------------------------------------------- wrong types


@pytest.mark.parametrize(
    ("document", "pointer"),
    [
        (with_changes(valid_a(), ("/app/aliases", "memo")), "/app/aliases"),
        (with_changes(valid_b(), ("/aliases", "memo")), "/aliases"),
        (with_changes(valid_c(), ("/app/aliases", "memo")), "/app/aliases"),
    ],
    ids=["A", "B", "C"],
)
def test_aliases_given_as_a_string_is_a_wrong_type_at_aliases(document: JsonDict, pointer: str) -> None:
    rejected_at(document, pointer, "'aliases' must be an array", "not a string")


@pytest.mark.parametrize(
    ("document", "pointer", "words"),
    [
        (with_changes(valid_a(), ("/version", 1)), "/version", ("must be a string", "integer")),
        (with_changes(valid_b(), ("/version", 1.0)), "/version", ("must be a string", "number")),
        (with_changes(valid_c(), ("/app/name", "Notes")), "/app/name", ("must be an object", "string")),
        (with_changes(valid_c(), ("/tools", {})), "/tools", ("must be an array", "object")),
        (with_changes(valid_a(), ("/tools/0/parameters", [])), "/tools/0/parameters", ("must be an object",)),
        (
            with_changes(valid_c(), ("/tools/0/parameters", "object")),
            "/tools/0/parameters",
            ("must be an object",),
        ),
        (
            with_changes(valid_b(), ("/platforms/linux/tools/0/parameters", None)),
            "/platforms/linux/tools/0/parameters",
            ("must be an object", "null"),
        ),
        (with_changes(valid_c(), ("/app/name/en", 1)), "/app/name/en", ("must be a string",)),
        (with_changes(valid_c(), ("/tools/0/name", True)), "/tools/0/name", ("must be a string", "boolean")),
        (
            with_changes(valid_c(), ("/execution/defaultHeaders/Accept", 1)),
            "/execution/defaultHeaders/Accept",
            ("must be a string",),
        ),
        (with_changes(valid_b(), ("/platforms", [])), "/platforms", ("must be an object", "array")),
        (with_changes(valid_a(), ("/app", None)), "/app", ("must be an object", "null")),
    ],
)
def test_a_value_of_the_wrong_json_type_is_reported_at_its_pointer(
    document: JsonDict, pointer: str, words: tuple[str, ...]
) -> None:
    rejected_at(document, pointer, *words)


def test_numbers_in_strings_are_not_coerced() -> None:
    document = with_changes(
        valid_c("linux"), ("/execution", {"type": "stdio", "command": "x", "timeout": "1000"})
    )

    rejected_at(document, "/execution/timeout", "must be a number", "string")


@pytest.mark.parametrize(
    ("document", "pointer", "field"),
    [
        (with_changes(valid_a(), ("/app/id", DELETE)), "/app/id", "'id'"),
        (with_changes(valid_b(), ("/name", DELETE)), "/name", "'name'"),
        (with_changes(valid_c(), ("/tools", DELETE)), "/tools", "'tools'"),
        (with_changes(valid_c(), ("/tools/0/parameters", DELETE)), "/tools/0/parameters", "'parameters'"),
    ],
)
def test_a_missing_required_field_is_reported_where_it_belongs(
    document: JsonDict, pointer: str, field: str
) -> None:
    rejected_at(document, pointer, "required field", field, "missing")


# --------------------------------------------------------------------------- execution and auth types


@pytest.mark.parametrize(
    ("base", "pointer", "expected"),
    [
        (valid_a(), "/execution/type", "'ipc' or 'http'"),
        (valid_c(), "/execution/type", "'apple-events'"),
        (valid_b(), "/platforms/macos/automation", "'applescript' or 'jxa'"),
        (valid_b(), "/platforms/web/automation", "'restapi'"),
    ],
    ids=["A", "C", "B-macos", "B-web"],
)
def test_an_unknown_execution_type_is_rejected_with_the_known_ones(
    base: JsonDict, pointer: str, expected: str
) -> None:
    rejected_at(with_changes(base, (pointer, "grpc")), pointer, "unknown", '"grpc"', expected)


@pytest.mark.parametrize(
    ("document", "pointer", "expected"),
    [
        (with_changes(valid_a("web"), ("/auth", {"type": "basic"})), "/auth/type", "'oauth2'"),
        (with_changes(valid_c(), ("/auth/type", "basic")), "/auth/type", "'cookie'"),
        (
            with_changes(valid_b(), ("/platforms/web/auth", {"type": "basic"})),
            "/platforms/web/auth/type",
            "'bearer'",
        ),
    ],
    ids=["A", "C", "B"],
)
def test_an_unknown_auth_type_is_rejected_with_the_known_ones(
    document: JsonDict, pointer: str, expected: str
) -> None:
    rejected_at(document, pointer, "unknown auth type", '"basic"', expected)


# --------------------------------------------------------------------------- names


def test_a_default_language_that_names_no_name_is_reported_at_default_lang() -> None:
    rejected_at(with_changes(valid_c(), ("/app/defaultLang", "fr")), "/app/defaultLang", "'fr'", "en, zh-CN")


def test_a_missing_default_language_is_reported_at_default_lang() -> None:
    rejected_at(with_changes(valid_c(), ("/app/defaultLang", DELETE)), "/app/defaultLang", "missing")


def test_an_empty_name_object_is_rejected() -> None:
    rejected_at(with_changes(valid_c(), ("/app/name", {})), "/app/name", "must not be empty")


# --------------------------------------------------------------------------- tools


@pytest.mark.parametrize(
    ("document", "pointer", "first"),
    [
        (with_changes(valid_a(), ("/tools/1/name", "search")), "/tools/1/name", "/tools/0"),
        (with_changes(valid_c(), ("/tools/1/name", "search")), "/tools/1/name", "/tools/0"),
        (
            with_changes(
                valid_b(),
                ("/platforms/linux/tools", [valid_b()["platforms"]["linux"]["tools"][0]] * 3),
            ),
            "/platforms/linux/tools/1/name",
            "/platforms/linux/tools/0",
        ),
    ],
    ids=["A", "C", "B"],
)
def test_a_duplicate_tool_name_is_reported_at_the_second_tool(
    document: JsonDict, pointer: str, first: str
) -> None:
    result = load(document)

    assert result.descriptor is None
    assert error_pointers(result)[0] == pointer
    assert all("duplicate tool name 'search'" in p.message for p in result.errors)
    assert f"first defined at {first})" in result.errors[0].message


def test_every_repetition_of_a_tool_name_is_reported_against_the_first() -> None:
    tools = [valid_b()["platforms"]["linux"]["tools"][0]] * 3
    result = load(with_changes(valid_b(), ("/platforms/linux/tools", tools)))

    assert error_pointers(result) == ["/platforms/linux/tools/1/name", "/platforms/linux/tools/2/name"]


def test_the_same_tool_name_in_two_dialect_b_sections_is_not_a_duplicate() -> None:
    result = load(valid_b())

    assert result.descriptor is not None
    assert result.errors == []


@pytest.mark.parametrize("name", ["", "1search", "search tools", "a" * 65, "x/y", "search\n"])
def test_a_tool_name_an_mcp_client_cannot_call_is_rejected(name: str) -> None:
    rejected_at(
        with_changes(valid_c(), ("/tools/0/name", name)), "/tools/0/name", "tool name", "must start with"
    )


@pytest.mark.parametrize(
    ("document", "pointer"),
    [
        (with_changes(valid_a(), ("/tools/0/description", DELETE)), "/tools/0/description"),
        (
            with_changes(valid_b(), ("/platforms/linux/tools/0/description", "")),
            "/platforms/linux/tools/0/description",
        ),
        (with_changes(valid_c(), ("/tools/0/description", None)), "/tools/0/description"),
    ],
    ids=["A", "B", "C"],
)
def test_a_missing_tool_description_is_only_a_warning(document: JsonDict, pointer: str) -> None:
    result = load(document)

    assert result.descriptor is not None
    assert result.errors == []
    assert [(w.pointer, w.severity) for w in result.warnings] == [(pointer, "warning")]
    assert "no description" in result.warnings[0].message


# --------------------------------------------------------------------------- parameters are Draft-07 schemas

TOOL_POINTER = {"A": "/tools/0", "B": "/platforms/linux/tools/0", "C": "/tools/0"}
DOCUMENTS = {"A": valid_a, "B": valid_b, "C": valid_c}


def tool_changed(dialect: str, relative: str, value: Any) -> JsonDict:
    return with_changes(DOCUMENTS[dialect](), (TOOL_POINTER[dialect] + relative, value))


@pytest.mark.parametrize("dialect", ["A", "B", "C"])
class TestParametersMustBeADraft07Schema:
    def test_a_misspelled_type_is_reported_at_that_type(self, dialect: str) -> None:
        document = tool_changed(dialect, "/parameters/properties/query/type", "strnig")

        rejected_at(
            document,
            TOOL_POINTER[dialect] + "/parameters/properties/query/type",
            "'strnig'",
            "JSON Schema type",
        )

    def test_required_that_is_not_an_array_is_reported_at_required(self, dialect: str) -> None:
        document = tool_changed(dialect, "/parameters/required", "query")

        rejected_at(document, TOOL_POINTER[dialect] + "/parameters/required", '"query"', '"array"')

    def test_a_required_list_with_repeats_is_reported_at_required(self, dialect: str) -> None:
        document = tool_changed(dialect, "/parameters/required", ["query", "query"])

        rejected_at(document, TOOL_POINTER[dialect] + "/parameters/required", "non-unique")

    def test_a_pattern_that_is_no_regex_is_reported_at_the_pattern(self, dialect: str) -> None:
        document = tool_changed(dialect, "/parameters/properties/query/pattern", "([a-z")

        rejected_at(
            document, TOOL_POINTER[dialect] + "/parameters/properties/query/pattern", '"([a-z"', "regex"
        )

    def test_a_remote_ref_is_refused(self, dialect: str) -> None:
        document = tool_changed(
            dialect, "/parameters/properties/query", {"$ref": "https://example.com/s.json"}
        )

        message = rejected_at(
            document, TOOL_POINTER[dialect] + "/parameters", "remote reference", "example.com"
        )
        assert "\n" not in message

    def test_a_local_ref_to_nothing_is_refused(self, dialect: str) -> None:
        document = tool_changed(dialect, "/parameters/properties/query", {"$ref": "#/definitions/missing"})

        rejected_at(document, TOOL_POINTER[dialect] + "/parameters", "cannot be used as a schema", "missing")

    def test_a_local_ref_to_a_definition_is_fine(self, dialect: str) -> None:
        document = tool_changed(
            dialect,
            "/parameters",
            {
                "type": "object",
                "definitions": {"q": {"type": "string"}},
                "properties": {"query": {"$ref": "#/definitions/q"}},
            },
        )

        result = load(document)
        assert result.errors == [], rendered(result)

    def test_parameters_of_a_type_other_than_object_are_reported_at_type(self, dialect: str) -> None:
        document = tool_changed(dialect, "/parameters/type", "array")

        rejected_at(document, TOOL_POINTER[dialect] + "/parameters/type", '"type": "object"')

    def test_another_schema_draft_is_refused_at_its_schema_keyword(self, dialect: str) -> None:
        document = tool_changed(
            dialect, "/parameters/$schema", "https://json-schema.org/draft/2020-12/schema"
        )

        rejected_at(document, TOOL_POINTER[dialect] + "/parameters/$schema", "Draft-07")

    def test_an_invalid_returns_schema_is_reported_under_returns(self, dialect: str) -> None:
        document = tool_changed(
            dialect, "/returns", {"type": "object", "properties": {"n": {"minimum": "0"}}}
        )

        rejected_at(document, TOOL_POINTER[dialect] + "/returns/properties/n/minimum", "returns", "number")

    def test_returns_may_describe_any_type(self, dialect: str) -> None:
        result = load(tool_changed(dialect, "/returns", {"type": "array", "items": {"type": "string"}}))

        assert result.errors == [], rendered(result)


def test_a_parameters_schema_without_type_counts_as_an_object() -> None:
    result = load(
        with_changes(valid_c(), ("/tools/0/parameters", {"properties": {"query": {}, "limit": {}}}))
    )

    assert result.errors == [], rendered(result)


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize(
    "version", ["1.0", "1", "v1.0.0", "1.0.0.0", "01.0.0", "1.0.0-", "", "1.0.0\n", "1١.0.0", "1.0.0-1١"]
)
@pytest.mark.parametrize("dialect", ["A", "C"])
def test_a_version_that_is_not_semver_is_rejected_in_dialects_a_and_c(dialect: str, version: str) -> None:
    document = with_changes(DOCUMENTS[dialect](), ("/version", version))

    rejected_at(document, "/version", "not a semantic version", "MAJOR.MINOR.PATCH")


@pytest.mark.parametrize("version", ["1.0.0", "0.1.2", "1.0.0-rc.1+build.5", "10.20.30"])
@pytest.mark.parametrize("dialect", ["A", "C"])
def test_a_semver_version_is_kept_as_given_in_dialects_a_and_c(dialect: str, version: str) -> None:
    descriptor = load(with_changes(DOCUMENTS[dialect](), ("/version", version))).descriptor

    assert descriptor is not None
    assert descriptor.version == version
    assert descriptor.declared_version == version


def test_dialect_b_accepts_major_minor_as_major_minor_zero() -> None:
    descriptor = load(with_changes(valid_b(), ("/version", "1.0"))).descriptor

    assert descriptor is not None
    assert descriptor.version == "1.0.0"
    assert descriptor.declared_version == "1.0"


@pytest.mark.parametrize("version", ["1", "1.0.0.0", "1.0.", "01.0", "1.0-beta", "1.x"])
def test_dialect_b_rejects_versions_that_are_neither_semver_nor_major_minor(version: str) -> None:
    rejected_at(
        with_changes(valid_b(), ("/version", version)), "/version", "not a semantic version", repr(version)
    )


# --------------------------------------------------------------------------- bindings fit their platform


def test_a_web_descriptor_asking_for_apple_events_is_rejected_at_execution_type() -> None:
    document = with_changes(
        valid_c("web"),
        ("/execution", {"type": "apple-events"}),
        ("/auth", DELETE),
        ("/tools/0/execution", DELETE),
        ("/tools/1/execution", DELETE),
    )

    rejected_at(document, "/execution/type", "'apple-events'", "platform 'web'", "allowed there: http")


@pytest.mark.parametrize(
    ("platform", "execution"),
    [
        ("macos", {"type": "dbus"}),
        ("linux", {"type": "com", "progId": "X.Y"}),
        ("windows", {"type": "apple-events"}),
        ("web", {"type": "stdio", "command": "x"}),
    ],
)
def test_a_dialect_c_binding_of_another_platform_is_rejected(platform: str, execution: JsonDict) -> None:
    document = with_changes(valid_c("macos"), ("/platform", platform), ("/execution", execution))

    rejected_at(document, "/execution/type", f"platform {platform!r}", "cannot run")


def test_a_dialect_a_web_descriptor_asking_for_ipc_is_rejected_at_execution_type() -> None:
    document = with_changes(
        valid_a("web"),
        ("/execution", {"type": "ipc"}),
        ("/tools/0/execution", DELETE),
        ("/tools/1/execution", DELETE),
    )

    rejected_at(document, "/execution/type", "'ipc'", "platform 'web'")


def test_a_dialect_b_section_with_another_platforms_automation_is_rejected() -> None:
    rejected_at(
        with_changes(valid_b(), ("/platforms/macos/automation", "dbus")),
        "/platforms/macos/automation",
        '"dbus"',
        "'applescript' or 'jxa'",
    )


def test_auth_on_a_local_binding_is_rejected_at_auth() -> None:
    document = with_changes(valid_c("macos"), ("/auth", valid_c("web")["auth"]))

    rejected_at(document, "/auth", "http execution only")


def test_tool_http_settings_on_a_local_binding_are_rejected() -> None:
    document = with_changes(valid_a("macos"), ("/tools/0/execution", {"path": "/x"}))

    rejected_at(document, "/tools/0/execution", "http only")


# --------------------------------------------------------------------------- placeholders


@pytest.mark.parametrize(
    ("document", "pointer"),
    [
        (with_changes(valid_c(), ("/tools/1/execution/path", "/notes/{x}")), "/tools/1/execution/path"),
        (with_changes(valid_a("web"), ("/tools/1/execution/path", "/notes/{x}")), "/tools/1/execution/path"),
        (
            with_changes(valid_b(), ("/platforms/web/tools/0/body", {"query": "${x}"})),
            "/platforms/web/tools/0/body/query",
        ),
        (
            with_changes(valid_b(), ("/platforms/web/tools/0/body", {"filter": ["a", {"q": "${x}"}]})),
            "/platforms/web/tools/0/body/filter/1/q",
        ),
        (
            with_changes(valid_b(), ("/platforms/web/tools/0/endpoint", "/s/{x}")),
            "/platforms/web/tools/0/endpoint",
        ),
        (
            with_changes(valid_b(), ("/platforms/web/tools/0/query_params", {"q": "${x}"})),
            "/platforms/web/tools/0/query_params/q",
        ),
        (
            with_changes(valid_b(), ("/platforms/macos/tools/0/script", 'search "${x}"')),
            "/platforms/macos/tools/0/script",
        ),
    ],
    ids=["C-path", "A-path", "B-body", "B-nested-body", "B-endpoint", "B-query", "B-script"],
)
def test_a_placeholder_that_names_no_parameter_is_rejected_where_it_is_written(
    document: JsonDict, pointer: str
) -> None:
    rejected_at(document, pointer, "placeholder for 'x'", "no declared parameter", "query")


def test_placeholders_in_the_mobile_and_com_bindings_must_name_parameters_too() -> None:
    mail = read_fixture("b_mail.json")
    mail["platforms"]["android"]["tools"][0]["extras"]["cc"] = "${cc}"
    mail["platforms"]["ios"]["tools"][0]["url_template"] += "&cc=${cc}"
    mail["platforms"]["windows"]["tools"][0]["script"][2]["value"] = "${cc}"

    result = load(mail)

    assert error_pointers(result) == [
        "/platforms/windows/tools/0/script/2/value",
        "/platforms/android/tools/0/extras/cc",
        "/platforms/ios/tools/0/url_template",
    ]


def test_a_placeholder_may_name_a_parameter_property_path() -> None:
    document = with_changes(valid_b(), ("/platforms/web/tools/0/body", {"q": "${query.text}"}))

    assert load(document).errors == []


def test_a_placeholder_that_is_no_name_at_all_is_rejected() -> None:
    document = with_changes(valid_b(), ("/platforms/web/tools/0/body", {"q": "${}"}))

    rejected_at(document, "/platforms/web/tools/0/body/q", "not a parameter name")


# --------------------------------------------------------------------------- AppleScript comments

SCRIPT = "/platforms/macos/tools/0/script"


def test_an_applescript_block_comment_holding_a_quote_is_rejected_at_its_script() -> None:
    document = with_changes(valid_b(), (SCRIPT, '(* say "*)" *) set x to "Hi ${query}"'))

    message = rejected_at(document, SCRIPT, "block comment", "character 1", "double quote", "'--' lines")

    assert "AppleScript's documentation does not say" in message


@pytest.mark.parametrize(
    "script",
    [
        '(* say hi (* nested *) *) search "${query}"',
        '-- say "hi"\nsearch "${query}"',
        '# say "hi"\nsearch "${query}"',
        'search "(* ${query} *)"',
    ],
)
def test_applescript_comments_and_strings_that_are_unambiguous_are_accepted(script: str) -> None:
    result = load(with_changes(valid_b(), (SCRIPT, script)))

    assert result.errors == [], rendered(result)


@pytest.mark.parametrize(
    ("script", "words"),
    [
        (
            'set r to {|k\\"|: "${query}"}',
            ("identifier |…| at character 11", "backslash before '\"'", "'\\|'"),
        ),
        ("search “${query}”", ("curly double quote (“) in code at character 8", "(character id 8220)")),
        ('search "say “${query}”"', ("curly double quote (“) in the string literal",)),
        ('search «class a|b» & "${query}"', ("raw code «…» at character 8 holds '|'",)),
        ('-- note ¬\nsearch "${query}"', ("holds '¬'", "continuation character")),
        ('-- note\u2028search "${query}"', ("line break other than LF or CR (U+2028) in the comment",)),
    ],
    ids=[
        "unknown escape in bars",
        "curly quotes in code",
        "curly quotes in a string",
        "raw code",
        "¬",
        "U+2028",
    ],
)
def test_an_applescript_template_whose_reading_is_in_doubt_is_rejected_at_its_script(
    script: str, words: tuple[str, ...]
) -> None:
    document = with_changes(valid_b(), (SCRIPT, script))

    message = rejected_at(document, SCRIPT, *words)

    assert "is in doubt" in message


@pytest.mark.parametrize(
    "script",
    [
        'set r to {|k\\|": "${query}" |:1}',
        'set |a\\\\| to "${query}"',
        'set x to «data utxt0022» & "${query}"',
        '-- say “hi” ¶\nsearch "${query}"',
        '-- windows line ends\r\nsearch "${query}"',
    ],
    ids=["escaped bar", "escaped backslash", "raw data", "curly quotes in a comment", "CRLF"],
)
def test_applescript_identifiers_raw_codes_and_comments_that_are_unambiguous_are_accepted(
    script: str,
) -> None:
    result = load(with_changes(valid_b(), (SCRIPT, script)))

    assert result.errors == [], rendered(result)


def test_a_jxa_block_comment_may_hold_quotes() -> None:
    document = with_changes(
        valid_b(),
        ("/platforms/macos/automation", "jxa"),
        (SCRIPT, '/* say "*/ search("${query}")'),
    )

    assert load(document).errors == []


# --------------------------------------------------------------------------- headers


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\x00b"])
@pytest.mark.parametrize(
    ("dialect", "pointer"),
    [
        ("A", "/execution/default_headers/X-Test"),
        ("A", "/tools/0/execution/headers/X-Test"),
        ("B", "/platforms/web/default_headers/X-Test"),
        ("B", "/platforms/web/tools/0/headers/X-Test"),
        ("C", "/execution/defaultHeaders/X-Test"),
        ("C", "/tools/0/execution/headers/X-Test"),
    ],
)
def test_a_header_value_with_cr_or_lf_is_rejected(dialect: str, pointer: str, value: str) -> None:
    base = {"A": valid_a("web"), "B": valid_b(), "C": valid_c("web")}[dialect]
    parent = pointer.rsplit("/", 1)[0]
    document = with_changes(base, (parent, {"X-Test": value}))

    rejected_at(document, pointer, "CR, LF or NUL")


HEADER_PARENTS = [
    ("A", "/execution/default_headers"),
    ("A", "/tools/0/execution/headers"),
    ("B", "/platforms/web/default_headers"),
    ("B", "/platforms/web/tools/0/headers"),
    ("C", "/execution/defaultHeaders"),
    ("C", "/tools/0/execution/headers"),
]


@pytest.mark.parametrize("value", ["a\x0bb", "a\x0cb", "a\x1bb", "a\x7fb"])
@pytest.mark.parametrize(("dialect", "parent"), HEADER_PARENTS)
def test_a_header_value_with_any_other_control_character_is_rejected(
    dialect: str, parent: str, value: str
) -> None:
    base = {"A": valid_a("web"), "B": valid_b(), "C": valid_c("web")}[dialect]

    rejected_at(with_changes(base, (parent, {"X-Test": value})), f"{parent}/X-Test", "control character")


@pytest.mark.parametrize(
    "name", ["Content-Length", "transfer-encoding", "Host", "Connection", "Keep-Alive", "TE", "Upgrade"]
)
@pytest.mark.parametrize(("dialect", "parent"), HEADER_PARENTS)
def test_a_header_the_http_client_writes_itself_is_rejected(dialect: str, parent: str, name: str) -> None:
    """A descriptor's `Content-Length: 5` or `Transfer-Encoding` would frame the request its
    own way (request smuggling), `Host` would pick another virtual host than the URL names."""
    base = {"A": valid_a("web"), "B": valid_b(), "C": valid_c("web")}[dialect]

    rejected_at(with_changes(base, (parent, {name: "5"})), f"{parent}/{name}", "set by the gateway")


@pytest.mark.parametrize(
    ("dialect", "auth", "pointer"),
    [
        ("B", {"type": "api_key", "key_name": "Content-Length"}, "/platforms/web/auth/key_name"),
        (
            "C",
            {
                "type": "apiKey",
                "apiKey": {"location": "header", "name": "Host", "obtainUrl": "https://e.com"},
            },
            "/auth/apiKey/name",
        ),
    ],
)
def test_an_api_key_header_the_http_client_writes_itself_is_rejected(
    dialect: str, auth: JsonDict, pointer: str
) -> None:
    base, where = (valid_b(), "/platforms/web/auth") if dialect == "B" else (valid_c("web"), "/auth")

    rejected_at(with_changes(base, (where, auth)), pointer, "set by the gateway")


def test_a_header_name_that_is_not_a_token_is_rejected() -> None:
    rejected_at(
        with_changes(valid_c(), ("/execution/defaultHeaders", {"Bad Header": "x"})),
        "/execution/defaultHeaders/Bad Header",
        "not a valid HTTP header name",
    )


# --------------------------------------------------------------------------- http needs a base URL


def test_dialect_a_http_without_base_url_is_rejected_at_base_url() -> None:
    rejected_at(
        with_changes(valid_a("web"), ("/execution/base_url", DELETE)), "/execution/base_url", "needs base_url"
    )


def test_dialect_a_web_without_execution_is_rejected_at_base_url() -> None:
    rejected_at(with_changes(valid_a("web"), ("/execution", DELETE)), "/execution/base_url", "needs base_url")


def test_dialect_c_http_without_base_url_is_rejected_at_base_url() -> None:
    rejected_at(
        with_changes(valid_c(), ("/execution/baseUrl", DELETE)), "/execution/baseUrl", "needs baseUrl"
    )


def test_dialect_c_web_without_execution_is_rejected_at_execution() -> None:
    rejected_at(with_changes(valid_c(), ("/execution", DELETE)), "/execution", "baseUrl")


def test_dialect_b_web_without_base_url_is_rejected_at_base_url() -> None:
    rejected_at(
        with_changes(valid_b(), ("/platforms/web/base_url", DELETE)), "/platforms/web/base_url", "missing"
    )


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://example.com", ("absolute http",)),
        ("/v1", ("absolute http",)),
        ("https://", ("absolute http",)),
        ("https://user:pw@example.com", ("credentials",)),
        ("http://[::1", ("absolute http",)),
    ],
)
def test_a_base_url_must_be_an_absolute_http_url_without_credentials(
    url: str, words: tuple[str, ...]
) -> None:
    rejected_at(with_changes(valid_c(), ("/execution/baseUrl", url)), "/execution/baseUrl", *words)


# --------------------------------------------------------------------------- unknown fields


@pytest.mark.parametrize(
    ("document", "pointer", "suggestion"),
    [
        (with_changes(valid_a(), ("/app/alias", ["x"])), "/app/alias", "aliases"),
        (
            with_changes(valid_b(), ("/platforms/linux/tools/0/timout", 3)),
            "/platforms/linux/tools/0/timout",
            "timeout",
        ),
        (with_changes(valid_c(), ("/app/descripton", "x")), "/app/descripton", "description"),
        (with_changes(valid_c(), ("/execution/baseURL", "x")), "/execution/baseURL", "baseUrl"),
        (with_changes(valid_c(), ("/schema_version", "1.0")), "/schema_version", "schemaVersion"),
    ],
)
def test_an_unknown_field_is_a_warning_that_suggests_the_closest_known_one(
    document: JsonDict, pointer: str, suggestion: str
) -> None:
    result = load(document)

    assert result.descriptor is not None
    assert result.errors == []
    assert [w.pointer for w in result.warnings] == [pointer]
    assert f"did you mean '{suggestion}'?" in result.warnings[0].message


def test_an_unknown_field_with_no_close_match_lists_the_known_fields() -> None:
    result = load(with_changes(valid_c(), ("/app/zzz", 1)))

    assert [w.pointer for w in result.warnings] == ["/app/zzz"]
    assert "known fields: id, name, defaultLang" in result.warnings[0].message


def test_extension_fields_and_schema_comments_are_not_warned_about() -> None:
    document = with_changes(
        valid_c(), ("/x-vendor", {"a": 1}), ("/$schema", "https://example.com/s"), ("/$comment", "hi")
    )

    result = load(document)
    assert result.problems == []


def test_settings_of_another_execution_type_are_a_warning() -> None:
    result = load(with_changes(valid_c(), ("/execution/command", "x")))

    assert result.descriptor is not None
    assert [(w.pointer, w.severity) for w in result.warnings] == [("/execution/command", "warning")]


# --------------------------------------------------------------------------- other rules


@pytest.mark.parametrize(
    ("document", "pointer", "words"),
    [
        (with_changes(valid_c(), ("/app/id", "com example")), "/app/id", ("app id",)),
        (with_changes(valid_c(), ("/app/id", "com.example\n")), "/app/id", ("app id",)),
        (with_changes(valid_b(), ("/appId", "-mail")), "/appId", ("reverse-DNS",)),
        (with_changes(valid_a(), ("/app/id", "")), "/app/id", ("must not be empty",)),
        (
            with_changes(valid_c("linux"), ("/execution", {"type": "stdio", "command": "x", "timeout": 0})),
            "/execution/timeout",
            ("timeout must be between",),
        ),
        (
            with_changes(valid_c("linux"), ("/execution", {"type": "stdio"})),
            "/execution/command",
            ("needs command",),
        ),
        (
            with_changes(valid_c("linux"), ("/execution", {"type": "acp"})),
            "/execution/start",
            ("needs start",),
        ),
        (
            with_changes(valid_c("windows"), ("/execution", {"type": "com"})),
            "/execution/progId",
            ("needs progId",),
        ),
        (with_changes(valid_c("windows"), ("/execution", DELETE)), "/execution", ("progId",)),
        (
            with_changes(valid_c("macos"), ("/execution", {"type": "apple-events", "eventClass": "AAI"})),
            "/execution/eventClass",
            ("four characters",),
        ),
        (
            with_changes(valid_c("linux"), ("/execution", {"type": "dbus", "objectPath": "org/x"})),
            "/execution/objectPath",
            ("DBus object path",),
        ),
        (
            with_changes(valid_c(), ("/auth", {"type": "apiKey"})),
            "/auth/apiKey",
            ("needs its settings object",),
        ),
        (
            with_changes(valid_c(), ("/auth/apiKey/obtainUrl", "settings/tokens")),
            "/auth/apiKey/obtainUrl",
            ("absolute http",),
        ),
        (
            with_changes(valid_b(), ("/platforms/linux/tools/0/method", "Search-It")),
            "/platforms/linux/tools/0/method",
            ("DBus method name",),
        ),
        (
            with_changes(valid_b(), ("/platforms/linux/tools/0/timeout", -1)),
            "/platforms/linux/tools/0/timeout",
            ("timeout must be between",),
        ),
        (
            with_changes(
                valid_b(), ("/platforms/web/auth", {"type": "oauth2", "token_url": "https://x.example/t"})
            ),
            "/platforms/web/auth/auth_url",
            ("needs auth_url",),
        ),
        (
            with_changes(valid_b(), ("/platforms/web/auth", {"type": "api_key"})),
            "/platforms/web/auth/key_name",
            ("needs key_name",),
        ),
        (with_changes(valid_b(), ("/platforms", {})), "/platforms", ("no platform",)),
    ],
)
def test_the_other_semantic_rules_report_their_pointer(
    document: JsonDict, pointer: str, words: tuple[str, ...]
) -> None:
    rejected_at(document, pointer, *words)


@pytest.mark.parametrize(
    ("dialect", "execution"),
    [("A", None), ("C", None), ("C", {"type": "dbus"}), ("C", {"type": "dbus", "objectPath": "/notes"})],
)
def test_an_app_id_that_must_serve_as_the_dbus_service_name_has_to_be_one(
    dialect: str, execution: JsonDict | None
) -> None:
    document = with_changes(valid_a("linux") if dialect == "A" else valid_c("linux"), ("/app/id", "notes"))
    if dialect == "C":
        document = with_changes(document, ("/execution", execution or DELETE))

    rejected_at(document, "/app/id", "'notes'", "DBus bus name")


def test_an_explicit_dbus_service_frees_the_app_id_from_dbus_naming() -> None:
    document = with_changes(
        valid_c("linux"),
        ("/app/id", "notes"),
        ("/execution", {"type": "dbus", "service": "org.example.Notes"}),
    )

    assert load(document).errors == []


def test_a_com_action_that_uses_an_object_before_it_is_stored_is_rejected() -> None:
    mail = read_fixture("b_mail.json")
    del mail["platforms"]["windows"]["tools"][0]["script"][0]

    result = load(mail)

    assert error_pointers(result) == ["/platforms/windows/tools/0/script/0/object"]
    assert "'app' is used before" in result.errors[0].message


# --------------------------------------------------------------------------- all problems together


@pytest.mark.parametrize(
    ("document", "pointers"),
    [
        (
            with_changes(
                valid_a(),
                ("/version", "one"),
                ("/tools/1/name", "search"),
                ("/tools/0/parameters/type", "array"),
            ),
            ["/version", "/tools/1/name", "/tools/0/parameters/type"],
        ),
        (
            with_changes(
                valid_b(),
                ("/version", "1"),
                ("/platforms/web/base_url", "ftp://x"),
                ("/platforms/macos/tools/0/script", "${nope}"),
            ),
            ["/version", "/platforms/macos/tools/0/script", "/platforms/web/base_url"],
        ),
        (
            with_changes(
                valid_c(),
                ("/app/defaultLang", "de"),
                ("/execution/defaultHeaders/Accept", "a\nb"),
                ("/tools/0/parameters/required", 1),
            ),
            ["/app/defaultLang", "/execution/defaultHeaders/Accept", "/tools/0/parameters/required"],
        ),
        (
            with_changes(valid_c(), ("/version", 1), ("/app/aliases", "x"), ("/tools/0/name", 5)),
            ["/version", "/app/aliases", "/tools/0/name"],
        ),
    ],
    ids=["A-semantic", "B-semantic", "C-semantic", "C-types"],
)
def test_all_problems_of_a_file_are_reported_together(document: JsonDict, pointers: list[str]) -> None:
    result = load(document)

    assert result.descriptor is None
    assert sorted(error_pointers(result)) == sorted(pointers)


def test_a_wrong_type_stops_the_semantic_checks_and_says_they_follow_once_it_is_fixed() -> None:
    result = load(with_changes(valid_c(), ("/app/aliases", "x"), ("/version", "one")))

    assert error_pointers(result) == ["/app/aliases"]
    [note] = [p for p in result.problems if p.severity == "warning"]
    assert "run once these structural errors are fixed" in note.message
    fixed = load(with_changes(valid_c(), ("/version", "one")))
    assert error_pointers(fixed) == ["/version"]


def test_load_descriptor_raises_one_descriptor_error_carrying_every_problem_with_its_file() -> None:
    document = with_changes(valid_a(), ("/version", "one"), ("/tools/1/name", "search"), ("/app/alias", []))

    with pytest.raises(DescriptorError) as caught:
        load_descriptor(json.dumps(document), source("apps/notes/aai.json"))

    error = caught.value
    assert error.code == ErrorCode.INVALID_REQUEST
    assert error.file == "apps/notes/aai.json"
    assert [(p.pointer, p.severity) for p in error.problems] == [
        ("/app/alias", "warning"),
        ("/version", "error"),
        ("/tools/1/name", "error"),
    ]
    assert all(p.file == "apps/notes/aai.json" for p in error.problems)
    assert error.message.startswith("invalid aai.json: apps/notes/aai.json: /version: ")
    assert error.message.endswith("(and 1 more)")
    assert error.to_payload()["error"]["data"]["problems"][1]["pointer"] == "/version"


def test_load_descriptor_returns_the_descriptor_when_there_are_only_warnings() -> None:
    document = with_changes(valid_c(), ("/tools/0/description", DELETE))

    descriptor = load_descriptor(json.dumps(document), source())

    assert descriptor.tools[0].description == ""


# --------------------------------------------------------------------------- review follow-ups


def test_acp_env_is_used_not_warned_about() -> None:
    document = with_changes(
        valid_c("linux"), ("/execution", {"type": "acp", "start": {"command": "agent"}, "env": {"A": "1"}})
    )
    result = load(document)
    assert result.descriptor is not None and result.problems == [], rendered(result)
    assert result.descriptor.tools[0].channel.model_dump()["env"] == {"A": "1"}


def test_acp_start_env_wins_over_execution_env_for_the_same_variable() -> None:
    execution = {
        "type": "acp",
        "start": {"command": "agent", "env": {"A": "start", "B": "b"}},
        "env": {"A": "x"},
    }
    result = load(with_changes(valid_c("linux"), ("/execution", execution)))
    assert result.descriptor is not None, rendered(result)
    assert result.descriptor.tools[0].channel.model_dump()["env"] == {"A": "start", "B": "b"}


@pytest.mark.parametrize(
    ("timeout", "expected_ms"),
    [(0.6, 1), (1500.4, 1500), (86_400_000, 86_400_000)],
)
def test_a_dialect_c_timeout_is_rounded_to_whole_milliseconds(timeout: float, expected_ms: int) -> None:
    result = load(
        with_changes(valid_c("linux"), ("/execution", {"type": "stdio", "command": "x", "timeout": timeout}))
    )
    assert result.descriptor is not None, rendered(result)
    assert result.descriptor.tools[0].effective_timeout_ms == expected_ms


@pytest.mark.parametrize("timeout", [0.4, 86_400_001])
def test_a_timeout_below_a_millisecond_or_above_a_day_is_refused(timeout: float) -> None:
    document = with_changes(
        valid_c("linux"), ("/execution", {"type": "stdio", "command": "x", "timeout": timeout})
    )
    rejected_at(document, "/execution/timeout", "timeout must be between 1 and 86400000 milliseconds")


def test_without_a_timeout_a_tool_gets_the_thirty_second_default_and_dialect_b_its_platform_default() -> None:
    c_result = load(with_changes(valid_c("linux"), ("/execution", {"type": "stdio", "command": "x"})))
    assert c_result.descriptor is not None
    assert c_result.descriptor.tools[0].effective_timeout_ms == 30_000
    mail = load(read_fixture("b_mail.json"), "linux").descriptor
    assert mail is not None
    timeouts = {s.platform: s.tools[0].effective_timeout_ms for s in mail.sections}
    assert timeouts == {
        "macos": 30_000,
        "windows": 30_000,
        "linux": 30_000,
        "android": 5_000,
        "ios": 10_000,
        "web": 30_000,
    }


def test_a_com_action_field_its_action_does_not_use_is_a_warning() -> None:
    document = with_changes(
        valid_b(),
        (
            "/platforms/windows",
            {
                "automation": "com",
                "tools": [
                    {
                        "name": "open",
                        "description": "Open",
                        "parameters": {"type": "object"},
                        "script": [
                            {"action": "create", "var": "app", "progid": "X.App", "method": "Oops"},
                            {"action": "return", "value": "ok"},
                        ],
                    }
                ],
            },
        ),
    )
    result = load(document)
    assert result.descriptor is not None
    assert [p.render() for p in result.warnings] == [
        "/platforms/windows/tools/0/script/0/method: warning: method is ignored by a 'create' action"
    ]


def test_a_pipe_name_with_no_name_in_it_is_refused() -> None:
    rejected_at(with_changes(valid_a(), ("/app/name", " | ")), "/app/name", "at least one name")
    rejected_at(with_changes(valid_b(), ("/name", "|")), "/name", "at least one name")


def test_default_headers_on_an_ipc_app_are_reported_as_ignored() -> None:
    document = with_changes(valid_a("macos"), ("/execution", {"type": "ipc", "default_headers": {"X": "1"}}))
    result = load(document)
    assert [p.render() for p in result.warnings] == [
        "/execution/default_headers: warning: default_headers is ignored for ipc execution"
    ]


def test_a_default_language_differing_only_in_case_gets_a_suggestion() -> None:
    message = rejected_at(with_changes(valid_c(), ("/app/defaultLang", "zh-cn")), "/app/defaultLang")
    assert "did you mean 'zh-CN'?" in message


def test_placeholders_in_a_tools_own_headers_must_name_parameters() -> None:
    document = with_changes(
        valid_c("web"), ("/tools/0/execution", {"path": "/s", "headers": {"X-Q": "${qury}"}})
    )
    rejected_at(document, "/tools/0/execution/headers/X-Q", "'qury'")


def test_a_stray_platforms_key_does_not_turn_a_camelcase_file_into_the_multi_platform_dialect() -> None:
    result = load(with_changes(valid_c(), ("/platforms", {})))
    assert result.dialect == "C"
    assert [p.pointer for p in result.warnings] == ["/platforms"]


@pytest.mark.parametrize("declared", [[], {}, 7, "https://json-schema.org/draft/2020-12/schema"])
def test_a_parameters_schema_declaring_anything_but_draft_07_is_refused(declared: Any) -> None:
    document = with_changes(valid_c(), ("/tools/0/parameters/$schema", declared))
    rejected_at(document, "/tools/0/parameters/$schema", "Draft-07")


def test_a_timeout_too_large_for_any_number_of_milliseconds_is_an_error_not_a_crash() -> None:
    document = with_changes(valid_b(), ("/platforms/linux/tools/0/timeout", 1e306))
    rejected_at(document, "/platforms/linux/tools/0/timeout", "timeout must be between")


@pytest.mark.parametrize("expires_in", [0.4, 0, 10**9])
def test_an_app_credential_lifetime_must_be_between_a_second_and_a_year(expires_in: float) -> None:
    document = read_fixture("c_web_appcredential.json")
    document["auth"]["appCredential"]["expiresIn"] = expires_in
    rejected_at(document, "/auth/appCredential/expiresIn", "expiresIn must be between 1 and")


@pytest.mark.parametrize(
    ("pointer", "value", "example"),
    [
        ("/app/aliases", "memo", 'for example ["memo"]'),
        ("/execution/timeout", "10s", "for example 30000 (milliseconds)"),
        ("/app/description", 3, 'for example "3"'),
        ("/app/name", ["Notes"], 'for example {"name": "value"}'),
    ],
)
def test_a_value_of_the_wrong_type_is_answered_with_what_a_right_one_looks_like(
    pointer: str, value: Any, example: str
) -> None:
    rejected_at(with_changes(valid_c("web"), (pointer, value)), pointer, "must be", example)
