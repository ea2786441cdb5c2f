"""AES-GCM value encryption: the ciphertext format, binding to (user, key), and the key that
must be there at start-up when the policy encrypts (never a fallback to plaintext)."""

from __future__ import annotations

import base64

import pytest

from charter.compile.specs.memory import MemoryPolicy
from charter.contracts.registry import Registry
from charter.memory.crypto import (
    MAKE_KEY,
    DecryptionError,
    MemoryKeyError,
    ValueCipher,
    associated_data,
    load_key,
)
from charter.memory.pipeline import WritePipeline

KEY = bytes(range(32))
KEY_B64 = base64.b64encode(KEY).decode()
OTHER_KEY = bytes(range(1, 33))
MISSING = (
    "no memory encryption key: the memory policy encrypts values at L2, L3, so set the "
    "environment variable CHARTER_MEMORY_KEY to a base64-encoded 256-bit key, made for example "
    'with: python -c "import os,base64;print(base64.b64encode(os.urandom(32)).decode())"'
)


def test_the_make_key_recipe_is_the_documented_one() -> None:
    assert (
        MAKE_KEY == 'python -c "import os,base64;print(base64.b64encode(os.urandom(32)).decode())"'
    )


def test_round_trip() -> None:
    cipher = ValueCipher(KEY)
    token = cipher.encrypt("身份证[ID]，电话[PHONE]", user_id="u1", fact_key="contact")
    assert cipher.decrypt(token, user_id="u1", fact_key="contact") == "身份证[ID]，电话[PHONE]"


def test_format_is_version_nonce_ciphertext_tag_in_base64() -> None:
    plain = "上海市浦东新区"
    token = ValueCipher(KEY).encrypt(plain, user_id="u1", fact_key="city")
    blob = base64.b64decode(token, validate=True)
    assert blob[0] == 1
    assert len(blob) == 1 + 12 + len(plain.encode()) + 16
    assert plain.encode() not in blob


def test_each_encryption_has_its_own_nonce() -> None:
    cipher = ValueCipher(KEY)
    tokens = {cipher.encrypt("same", user_id="u1", fact_key="k") for _ in range(50)}
    assert len(tokens) == 50


def test_associated_data_is_length_prefixed() -> None:
    assert associated_data("ab", "c") == b"\x01\x00\x00\x00\x02ab\x00\x00\x00\x01c"
    assert associated_data("ab", "c") != associated_data("a", "bc")
    assert (
        associated_data("用户", "k")
        == b"\x01\x00\x00\x00\x06" + "用户".encode() + b"\x00\x00\x00\x01k"
    )


@pytest.mark.parametrize(
    ("user_id", "fact_key"),
    [("u2", "phone"), ("u1", "address"), ("u1 ", "phone"), ("", "u1phone")],
    ids=["other-user", "other-key", "near-user", "shifted"],
)
def test_a_value_moved_to_another_row_does_not_decrypt(user_id: str, fact_key: str) -> None:
    cipher = ValueCipher(KEY)
    token = cipher.encrypt("[PHONE]", user_id="u1", fact_key="phone")
    with pytest.raises(DecryptionError, match="does not decrypt"):
        cipher.decrypt(token, user_id=user_id, fact_key=fact_key)


def test_another_key_does_not_decrypt() -> None:
    token = ValueCipher(KEY).encrypt("secret", user_id="u1", fact_key="k")
    with pytest.raises(DecryptionError, match="does not decrypt"):
        ValueCipher(OTHER_KEY).decrypt(token, user_id="u1", fact_key="k")


def test_a_damaged_value_does_not_decrypt() -> None:
    cipher = ValueCipher(KEY)
    blob = bytearray(base64.b64decode(cipher.encrypt("secret", user_id="u1", fact_key="k")))
    blob[20] ^= 1
    with pytest.raises(DecryptionError, match="does not decrypt"):
        cipher.decrypt(base64.b64encode(blob).decode(), user_id="u1", fact_key="k")


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("not base64!", "not an encrypted memory value (bad base64)"),
        ("", "not an encrypted memory value (unknown format)"),
        (
            base64.b64encode(b"\x03" + bytes(40)).decode(),
            "not an encrypted memory value (unknown format)",
        ),
        (
            base64.b64encode(b"\x01" + bytes(20)).decode(),
            "not an encrypted memory value (unknown format)",
        ),
        (
            base64.b64encode(b"\x02" + bytes(28)).decode(),
            "not an encrypted memory value (unknown format)",
        ),
        (
            base64.b64encode(b"\x02" + bytes(40)).decode(),
            "the value is sealed under a user data key and this cipher has none",
        ),
    ],
    ids=["bad-base64", "empty", "version-3", "too-short", "too-short-2", "user-key"],
)
def test_what_is_no_ciphertext_is_refused(token: str, message: str) -> None:
    with pytest.raises(DecryptionError) as info:
        ValueCipher(KEY).decrypt(token, user_id="u1", fact_key="k")
    assert str(info.value) == message


# ---- the key -------------------------------------------------------------------------------


def test_key_from_the_environment() -> None:
    assert load_key(MemoryPolicy(), environ={"CHARTER_MEMORY_KEY": KEY_B64 + "\n"}) == KEY


def test_key_from_the_variable_the_policy_names() -> None:
    policy = MemoryPolicy(key_env="BANK_MEMORY_KEY")
    assert load_key(policy, environ={"BANK_MEMORY_KEY": KEY_B64, "CHARTER_MEMORY_KEY": ""}) == KEY


@pytest.mark.parametrize("given", [KEY_B64, KEY], ids=["base64", "raw-bytes"])
def test_an_explicit_key_wins_over_the_environment(given: str | bytes) -> None:
    other = base64.b64encode(OTHER_KEY).decode()
    assert load_key(MemoryPolicy(), given, environ={"CHARTER_MEMORY_KEY": other}) == KEY


def test_no_key_needed_when_nothing_is_encrypted() -> None:
    assert load_key(MemoryPolicy(encrypt_levels=frozenset()), environ={}) is None


@pytest.mark.parametrize("value", [None, "", "  "], ids=["unset", "empty", "blank"])
def test_a_missing_key_is_an_error_naming_the_variable_and_the_recipe(value: str | None) -> None:
    environ = {} if value is None else {"CHARTER_MEMORY_KEY": value}
    with pytest.raises(MemoryKeyError) as info:
        load_key(MemoryPolicy(), environ=environ)
    assert str(info.value) == MISSING


def test_the_message_names_the_policy_s_variable_and_levels() -> None:
    policy = MemoryPolicy(encrypt_levels=frozenset({"L3"}), key_env="MED_KEY")
    with pytest.raises(
        MemoryKeyError, match=r"encrypts values at L3, so set the environment variable MED_KEY "
    ):
        load_key(policy, environ={})


def test_a_key_that_is_no_base64_is_an_error_without_the_key() -> None:
    with pytest.raises(MemoryKeyError) as info:
        load_key(MemoryPolicy(), environ={"CHARTER_MEMORY_KEY": "s3cr3t-passw0rd!"})
    message = str(info.value)
    assert message.startswith("the environment variable CHARTER_MEMORY_KEY is not valid base64 (")
    assert message.endswith(
        "); it must hold a base64-encoded 256-bit key, made for example with: " + MAKE_KEY
    )
    assert "s3cr3t" not in message


@pytest.mark.parametrize("size", [16, 24, 31, 33, 64])
def test_a_key_of_another_size_is_an_error(size: int) -> None:
    short = base64.b64encode(bytes(size)).decode()
    with pytest.raises(MemoryKeyError) as info:
        load_key(MemoryPolicy(), environ={"CHARTER_MEMORY_KEY": short})
    assert str(info.value) == (
        f"the environment variable CHARTER_MEMORY_KEY decodes to {size} bytes, not 32: it must "
        f"hold a base64-encoded 256-bit key, made for example with: {MAKE_KEY}"
    )


def test_a_malformed_key_is_an_error_even_when_nothing_is_encrypted() -> None:
    with pytest.raises(MemoryKeyError, match="decodes to 3 bytes"):
        load_key(MemoryPolicy(encrypt_levels=frozenset()), environ={"CHARTER_MEMORY_KEY": "AAAA"})


def test_a_malformed_explicit_key_names_its_source() -> None:
    with pytest.raises(MemoryKeyError, match=r"^the memory key passed in decodes to 3 bytes"):
        load_key(MemoryPolicy(), "AAAA", environ={"CHARTER_MEMORY_KEY": KEY_B64})


def test_the_cipher_refuses_a_key_of_another_size() -> None:
    with pytest.raises(MemoryKeyError, match="a memory key has 32 bytes, not 16"):
        ValueCipher(bytes(16))


def test_the_pipeline_will_not_start_without_the_key(registry: Registry) -> None:
    with pytest.raises(MemoryKeyError) as info:
        WritePipeline(MemoryPolicy(), registry, environ={})
    assert str(info.value) == MISSING


def test_the_pipeline_starts_without_a_key_when_nothing_is_encrypted(registry: Registry) -> None:
    pipeline = WritePipeline(MemoryPolicy(encrypt_levels=frozenset()), registry, environ={})
    assert pipeline.cipher is None


def test_the_pipeline_reads_the_environment_by_default(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHARTER_MEMORY_KEY", KEY_B64)
    pipeline = WritePipeline(MemoryPolicy(), registry)
    assert pipeline.cipher is not None
    token = pipeline.cipher.encrypt("x", user_id="u", fact_key="k")
    assert ValueCipher(KEY).decrypt(token, user_id="u", fact_key="k") == "x"
    monkeypatch.delenv("CHARTER_MEMORY_KEY")
    with pytest.raises(MemoryKeyError):
        WritePipeline(MemoryPolicy(), registry)
