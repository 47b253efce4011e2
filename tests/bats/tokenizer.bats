#!/usr/bin/env bats
# tokenizer/: vocab.tsv equal, line for line, to the arrays of metadata/ for
# llama.cpp's own vocabulary files (its models/ggml-vocab-*.gguf, from the
# source node-llama-cpp ships); special and the two tokenizer warnings on
# hand-made files, exactly, and none on llama.cpp's current files; sizes
# exact in stat; everything following metadata edits; no tokenizer/
# without tokenizer.ggml.tokens.

load test_helper

setup() {
    require_fuse
    MNT="$BATS_TEST_TMPDIR/mnt"
}

# model KIND: a hand-made model (make_tokenizer_model.py), its keys'
# offsets in $BATS_TEST_TMPDIR/KIND.offsets.
model() {
    local out=$BATS_TEST_TMPDIR/$1.gguf
    "$PYTHON" "$HELPERS/make_tokenizer_model.py" "$out" "$1" >"$BATS_TEST_TMPDIR/$1.offsets"
    echo "$out"
}

offset_of() {
    awk -v k="$2" '$1 == k {print $2}' "$BATS_TEST_TMPDIR/$1.offsets"
}

# same_size FILE: stat's size is the bytes a read gives.
same_size() {
    [ "$(stat -c %s "$1")" -eq "$(wc -c <"$1")" ] || { echo "$1: stat $(stat -c %s "$1"), read $(wc -c <"$1")"; false; }
}

# llama.cpp's vocabulary files, or a skip saying why there are none.
llama_vocabs() {
    VOCABS=$("$GGUF_FS_SCRIPTS/fixtures/llama-vocabs" 2>"$BATS_TEST_TMPDIR/vocabs.err") ||
        skip "llama.cpp's vocabulary files: $(cat "$BATS_TEST_TMPDIR/vocabs.err")"
}

@test "vocab.tsv is the arrays of metadata/, line for line, for each of llama.cpp's vocabulary files" {
    llama_vocabs
    mount_model "$VOCABS" "$MNT"
    local n
    n=$(ls "$VOCABS" | grep -c '^ggml-vocab-.*\.gguf$')
    [ "$n" -ge 15 ]
    run "$PYTHON" "$HELPERS/check_vocab.py" "$MNT"/ggml-vocab-*.gguf
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == "$n models, "* ]]
    # llama 3's 128,256 tokens: the header and one line each, read with awk.
    [ "$(awk -F'\t' 'NR > 1 && NF == 4' "$MNT/ggml-vocab-llama-bpe.gguf/tokenizer/vocab.tsv" | wc -l)" -eq 128256 ]
    [ "$(sed -n 128002p "$MNT/ggml-vocab-llama-bpe.gguf/tokenizer/vocab.tsv")" = $'128000\tcontrol\t\t<|begin_of_text|>' ]
}

@test "llama.cpp's current vocabulary files give no warning; its two without a pre-tokenizer give exactly that one" {
    llama_vocabs
    mount_model "$VOCABS" "$MNT"
    local m
    for m in "$MNT"/ggml-vocab-*.gguf; do
        case ${m##*/} in
        # Kept from before pre-tokenizers, and no longer tested by
        # llama.cpp, which itself warns "missing pre-tokenizer type" on them.
        ggml-vocab-aquila.gguf | ggml-vocab-gpt-neox.gguf)
            run cat "$m/warnings"
            [[ "$output" =~ ^offset\ [0-9]+:\ key\ \'tokenizer.ggml.model\':\ a\ BPE\ vocabulary\ \(\'gpt2\'\)\ without\ tokenizer.ggml.pre ]] ||
                { echo "${m##*/}: $output"; false; }
            [ "${#lines[@]}" -eq 1 ]
            ;;
        *)
            [ ! -s "$m/warnings" ] || { echo "${m##*/}:"; cat "$m/warnings"; false; }
            ;;
        esac
        # Each special token in the vocabulary, with its text.
        same_size "$m/tokenizer/special"
        grep -v '^add_' "$m/tokenizer/special" >"$BATS_TEST_TMPDIR/ids"
        [ -s "$BATS_TEST_TMPDIR/ids" ]
        run grep -Ev '^[a-z_]+: [0-9]+ [^-]' "$BATS_TEST_TMPDIR/ids"
        [ "$status" -eq 1 ] || { echo "${m##*/}: $output"; false; }
    done
    [ "$(cat "$MNT/ggml-vocab-llama-spm.gguf/tokenizer/special")" = $'bos: 1 <s>\neos: 2 </s>\nunknown: 0 <unk>\nadd_bos: true\nadd_eos: false' ]
}

@test "special names each special token with its id and text; ids outside the vocabulary and none read as such" {
    local m
    m=$(model special)
    mount_model "$m" "$MNT"
    [ "$(cat "$MNT/tokenizer/special")" = 'bos: 1 <s>
eos: 7 -
eot: -1 -
padding: -1 -
unknown: -5 -
seperator: 3 a\tb
add_bos: true
add_eos: false' ]
    same_size "$MNT/tokenizer/special"
    # Types named as llama.cpp names them (9 has no name), scores as
    # metadata/ writes floats, tokens escaped as in arrays.
    [ "$(cat "$MNT/tokenizer/vocab.tsv")" = "$(printf '%s\n' $'id\ttype\tscore\ttoken' $'0\tunknown\t0\t<unk>' \
        $'1\tcontrol\t0\t<s>' $'2\tcontrol\t0\t</s>' $'3\tnormal\t-1.5\ta\\tb' $'4\tuser_defined\t0.25\tnew\\nline' \
        $'5\tbyte\t1e-05\t\u00e9' $'6\t9\t-3\t\\x01')" ]
    same_size "$MNT/tokenizer/vocab.tsv"
    run "$PYTHON" "$HELPERS/check_vocab.py" "$MNT"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [ "$(ls "$MNT/tokenizer")" = $'special\nvocab.tsv' ]
}

@test "warnings has a line at the key for an id outside the vocabulary and for a BPE vocabulary without pre-tokenizer, and only there" {
    local m
    m=$(model special)
    mount_model "$m" "$MNT"
    [ "$(cat "$MNT/warnings")" = "offset $(offset_of special tokenizer.ggml.model): key 'tokenizer.ggml.model': a BPE vocabulary ('gpt2') without tokenizer.ggml.pre: llama.cpp uses its default pre-tokenizer and output degrades
offset $(offset_of special tokenizer.ggml.eos_token_id): key 'tokenizer.ggml.eos_token_id': token id 7 is outside the vocabulary (7 tokens)
offset $(offset_of special tokenizer.ggml.unknown_token_id): key 'tokenizer.ggml.unknown_token_id': token id -5 is outside the vocabulary (7 tokens)" ]
    # Without types, scores or special ids, and with its pre-tokenizer:
    # empty columns, an empty special, no warning.
    local bare mnt2=$BATS_TEST_TMPDIR/mnt2
    bare=$(model bare)
    mount_model "$bare" "$mnt2"
    [ ! -s "$mnt2/warnings" ]
    [ "$(cat "$mnt2/tokenizer/vocab.tsv")" = $'id\ttype\tscore\ttoken\n0\t\t\tx\n1\t\t\ty' ]
    [ ! -s "$mnt2/tokenizer/special" ]
    same_size "$mnt2/tokenizer/special"
}

@test "a model without tokenizer.ggml.tokens has no tokenizer/" {
    mount_model "$(fixture type-f32.gguf)" "$MNT"
    [ ! -e "$MNT/tokenizer" ]
    run ls "$MNT"
    [[ "$output" != *tokenizer* ]]
    [ "$(stat -c %h "$MNT")" -eq 4 ]
}

@test "tokenizer/ follows metadata edits: ids, pre-tokenizer, tokens, the key's removal and its making again" {
    local m
    m=$(model special)
    mount_model "$m" "$MNT" -o edit
    [ "$(stat -c %h "$MNT")" -eq 5 ]
    printf '2\n' >"$MNT/metadata/tokenizer.ggml.eos_token_id"
    grep -qx 'eos: 2 </s>' "$MNT/tokenizer/special"
    same_size "$MNT/tokenizer/special"
    run ! grep -q eos_token_id "$MNT/warnings"
    printf 'llama-bpe\n' >"$MNT/metadata/tokenizer.ggml.pre"
    run ! grep -q BPE "$MNT/warnings"
    grep -q 'unknown_token_id' "$MNT/warnings"
    printf 'A\nB\nC\n' >"$MNT/metadata/tokenizer.ggml.tokens"
    [ "$(cut -f1,4 "$MNT/tokenizer/vocab.tsv")" = $'id\ttoken\n0\tA\n1\tB\n2\tC' ]
    same_size "$MNT/tokenizer/vocab.tsv"
    grep -qx 'eos: 2 C' "$MNT/tokenizer/special"
    grep -qx 'seperator: 3 -' "$MNT/tokenizer/special"
    grep -q "key 'tokenizer.ggml.seperator_token_id': token id 3 is outside the vocabulary (3 tokens)" "$MNT/warnings"
    rm "$MNT/metadata/tokenizer.ggml.tokens"
    [ ! -e "$MNT/tokenizer" ]
    [ ! -s "$MNT/warnings" ]
    [ "$(stat -c %h "$MNT")" -eq 4 ]
    # Made again (an array of strings): tokenizer/ is back.
    touch "$MNT/metadata/tokenizer.ggml.tokens"
    setfattr -n user.gguf.type -v 'arr[str]' "$MNT/metadata/tokenizer.ggml.tokens"
    printf 'p\nq\n' >"$MNT/metadata/tokenizer.ggml.tokens"
    [ "$(cut -f4 "$MNT/tokenizer/vocab.tsv")" = $'token\np\nq' ]
    grep -qx 'bos: 1 q' "$MNT/tokenizer/special"
    [ "$(stat -c %h "$MNT")" -eq 5 ]
}
