#!/usr/bin/env bats
# Chat-template findings in warnings, through a mount: models whose
# tokenizer.chat_template (or tokenizer.chat_template.NAME) reaches for
# Python's internals as template-injection exploits do, and models with
# the real templates of popular models, which give none.

load test_helper

REAL="$BATS_TEST_DIRNAME/../templates/real"

setup() {
    require_fuse
}

# model OUT KEY=FILE...: a model with those string keys; leaves each key's
# value offset in $BATS_TEST_TMPDIR/OUT.offsets ("KEY OFFSET" lines).
model() {
    local out=$BATS_TEST_TMPDIR/$1
    shift
    "$PYTHON" "$HELPERS/make_template_model.py" "$out" "$@" >"$out.offsets"
    echo "$out"
}

# offset_of MODEL KEY [N]: the value offset of the Nth occurrence of KEY.
offset_of() {
    awk -v k="$2" -v n="${3:-1}" '$1 == k && ++seen == n {print $2}' "$1.offsets"
}

@test "a CVE-2024-34359 template gives one line per reach, at its exact offset; metadata is unchanged" {
    local t=$BATS_TEST_TMPDIR/evil.jinja mnt=$BATS_TEST_TMPDIR/mnt
    printf '%s' "{{ cycler.__init__.__globals__.os.popen('id').read() }}" >"$t"
    local m
    m=$(model evil.gguf "tokenizer.chat_template=$t")
    local at
    at=$(offset_of "$m" tokenizer.chat_template)
    mount_model "$m" "$mnt"
    run --separate-stderr grep -F "offset $((at + 10)): key 'tokenizer.chat_template' at byte 10 of its value: attribute '__init__' begins with '_'" "$mnt/warnings"
    [ "$status" -eq 0 ]
    run --separate-stderr grep -F "offset $((at + 19)): key 'tokenizer.chat_template' at byte 19 of its value: attribute '__globals__' begins with '_'" "$mnt/warnings"
    [ "$status" -eq 0 ]
    [ "$(wc -l <"$mnt/warnings")" -eq 2 ]
    [ "$(stat -c %s "$mnt/warnings")" -eq "$(cat "$mnt/warnings" | wc -c)" ]
    # The template itself is served as it is, with the newline of a string.
    cmp "$mnt/metadata/tokenizer.chat_template" <(cat "$t"; echo)
    run grep -l chat_template "$mnt/warnings"
    [ "$output" = "$mnt/warnings" ]
}

@test "names hidden by escapes, filters and constant expressions are found" {
    local t=$BATS_TEST_TMPDIR/hidden.jinja mnt=$BATS_TEST_TMPDIR/mnt
    printf '%s' "{{ x|attr('\\x5f\\x5fclass\\x5f\\x5f') }}{{ y['%c%c'|format(95,95) ~ 'globals__'] }}{{ z|map(attribute='a.__dict__')|list }}{{ w|attr(n) }}" >"$t"
    local m at
    m=$(model hidden.gguf "tokenizer.chat_template=$t")
    at=$(offset_of "$m" tokenizer.chat_template)
    mount_model "$m" "$mnt"
    run --separate-stderr cat "$mnt/warnings"
    [ "${lines[0]}" = "offset $((at + 10)): key 'tokenizer.chat_template' at byte 10 of its value: attr filter name '__class__' begins with '_'" ]
    [ "${lines[1]}" = "offset $((at + 42)): key 'tokenizer.chat_template' at byte 42 of its value: subscript '__globals__' begins with '_'" ]
    [ "${lines[2]}" = "offset $((at + 99)): key 'tokenizer.chat_template' at byte 99 of its value: map attribute 'a.__dict__' has a part beginning with '_'" ]
    [ "${lines[3]}" = "offset $((at + 130)): key 'tokenizer.chat_template' at byte 130 of its value: attr filter name is computed: n" ]
    [ "${#lines[@]}" -eq 4 ]
}

@test "tokenizer.chat_template.tool_use is audited, and a repeated template key in each occurrence" {
    local a=$BATS_TEST_TMPDIR/a.jinja b=$BATS_TEST_TMPDIR/b.jinja mnt=$BATS_TEST_TMPDIR/mnt
    printf '%s' "{{ messages[0].__class__ }}" >"$a"
    printf '%s' "{{ lipsum.__globals__ }}" >"$b"
    local m
    m=$(model repeat.gguf "tokenizer.chat_template=$REAL/meta-llama-Llama-3.1-8B-Instruct.jinja" \
        "tokenizer.chat_template.tool_use=$a" "tokenizer.chat_template=$b")
    mount_model "$m" "$mnt"
    local tool again
    tool=$(offset_of "$m" tokenizer.chat_template.tool_use)
    again=$(offset_of "$m" tokenizer.chat_template 2)
    run --separate-stderr cat "$mnt/warnings"
    [ "${lines[0]}" = "offset $((tool + 15)): key 'tokenizer.chat_template.tool_use' at byte 15 of its value: attribute '__class__' begins with '_'" ]
    [[ "${lines[1]}" == "offset "*": key 'tokenizer.chat_template' appears again (first at offset "*"): {{ lipsum.__globals__ }}" ]]
    [ "${lines[2]}" = "offset $((again + 10)): key 'tokenizer.chat_template' at byte 10 of its value: attribute '__globals__' begins with '_'" ]
    [ "${#lines[@]}" -eq 3 ]
    # The first occurrence is the file; warnings follow file order.
    cmp "$mnt/metadata/tokenizer.chat_template" <(cat "$REAL/meta-llama-Llama-3.1-8B-Instruct.jinja"; echo)
}

@test "models with the real templates of popular models have empty warnings" {
    local t i=0
    for t in meta-llama-Llama-3.1-8B-Instruct Qwen-Qwen3-0.6B openai-gpt-oss-120b google-gemma-4-31B-it \
        mistralai-Ministral-3-14B-Reasoning-2512 deepseek-ai-DeepSeek-V3.1 ibm-granite-granite-4.0; do
        i=$((i + 1))
        local m
        m=$(model "real$i.gguf" "tokenizer.chat_template=$REAL/$t.jinja" \
            "tokenizer.chat_template.tool_use=$REAL/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja")
        mount_model "$m" "$BATS_TEST_TMPDIR/real$i"
        [ "$(stat -c %s "$BATS_TEST_TMPDIR/real$i/warnings")" -eq 0 ] || { echo "$t:"; cat "$BATS_TEST_TMPDIR/real$i/warnings"; false; }
        [ -z "$(cat "$BATS_TEST_TMPDIR/real$i/warnings")" ]
        cmp "$BATS_TEST_TMPDIR/real$i/metadata/tokenizer.chat_template" <(cat "$REAL/$t.jinja"; echo)
    done
}

@test "a split set's template findings name its first shard, with that file's offsets" {
    local t=$BATS_TEST_TMPDIR/evil.jinja mnt=$BATS_TEST_TMPDIR/mnt
    printf '%s' "{{ x['__globals__'] }}" >"$t"
    local m at
    m=$(model whole.gguf "tokenizer.chat_template=$t")
    at=$(offset_of "$m" tokenizer.chat_template)
    mkdir -p "$BATS_TEST_TMPDIR/set"
    "$PYTHON" "$HELPERS/../../scripts/tools/gguf-split-set" --no-tensor-first-split "$m" "$BATS_TEST_TMPDIR/set/evil"
    # Shard 1 keeps the model's keys where they were.
    cmp <(head -c "$at" "$m" | tail -c 40) <(head -c "$at" "$BATS_TEST_TMPDIR/set/evil-00001-of-00002.gguf" | tail -c 40)
    mount_model "$BATS_TEST_TMPDIR/set/evil-00002-of-00002.gguf" "$mnt"
    run --separate-stderr cat "$mnt/warnings"
    [ "$output" = "evil-00001-of-00002.gguf: offset $((at + 5)): key 'tokenizer.chat_template' at byte 5 of its value: subscript '__globals__' begins with '_'" ]
}
