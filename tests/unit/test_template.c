/*
 * The chat-template audit (template/ggt.h): the shapes of known
 * template-injection payloads, each with the exact offset and name of its
 * findings; names decoded as Jinja decodes string literals; names built of
 * constants; what is not code (text, comments, raw blocks); hostile bytes
 * (unterminated strings and tags, deep nesting, NUL, invalid UTF-8, huge
 * templates), each template audited from an exact-size heap copy so the
 * sanitizers see any read past its end; and then every real template in
 * the directory given, which must give no finding.
 *
 * usage: test_template REAL_TEMPLATES_DIR
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ggt.h"

/* ==== Findings as text: "AT WHAT 'NAME' HOW" a line ==== */

typedef struct lines {
    char *buf;
    size_t len, cap;
    unsigned count;
} lines;

static void add(lines *l, const char *s, size_t n)
{
    if (l->len + n + 1 > l->cap) {
        l->cap = (l->len + n + 1) * 2;
        l->buf = realloc(l->buf, l->cap);
        if (!l->buf)
            abort();
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
    l->buf[l->len] = '\0';
}

static void on_finding(void *ctx, const ggt_finding *f)
{
    lines *l = ctx;
    char head[256];
    int n;
    if (f->name.len == 0)
        n = snprintf(head, sizeof head, "%llu %s %s\n", (unsigned long long)f->at, f->what, f->how);
    else if (f->source)
        n = snprintf(head, sizeof head, "%llu %s %s %.*s%s\n", (unsigned long long)f->at, f->what, f->how,
                     (int)f->name.len, f->name.ptr, f->cut ? "..." : "");
    else
        n = snprintf(head, sizeof head, "%llu %s '%.*s'%s %s\n", (unsigned long long)f->at, f->what,
                     (int)f->name.len, f->name.ptr, f->cut ? "..." : "", f->how);
    add(l, head, (size_t)n);
    l->count++;
}

/* Audits len bytes from an exact-size copy; the findings' text in *out. */
static int audit_bytes(const char *bytes, size_t len, lines *out)
{
    char *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    memcpy(copy, bytes, len);
    *out = (lines){NULL, 0, 0, 0};
    add(out, "", 0);
    const bool ok = ggt_audit(copy, len, on_finding, out);
    free(copy);
    return ok;
}

static int findings_are(const char *template, const char *want)
{
    lines got;
    EXPECT(audit_bytes(template, strlen(template), &got));
    if (strcmp(got.buf, want) != 0) {
        fprintf(stderr, "template: %s\nfindings:\n%sexpected:\n%s", template, got.buf, want);
        free(got.buf);
        return 0;
    }
    free(got.buf);
    return 1;
}

#define FINDINGS(template, want) EXPECT(findings_are(template, want))

/* ==== Known payloads ==== */

static int test_attribute_chains(void)
{
    FINDINGS("{{ self._TemplateReference__context }}",
             "8 attribute '_TemplateReference__context' begins with '_'\n");
    // CVE-2024-34359's payload.
    FINDINGS("{{ cycler.__init__.__globals__.os.popen('id').read() }}",
             "10 attribute '__init__' begins with '_'\n"
             "19 attribute '__globals__' begins with '_'\n");
    FINDINGS("{{ joiner.__init__.__globals__ }}{{ lipsum.__globals__['os'] }}",
             "10 attribute '__init__' begins with '_'\n"
             "19 attribute '__globals__' begins with '_'\n"
             "43 attribute '__globals__' begins with '_'\n");
    FINDINGS("{{ namespace.__init__.__globals__ }}",
             "13 attribute '__init__' begins with '_'\n"
             "22 attribute '__globals__' begins with '_'\n");
    FINDINGS("{{ ().__class__.__base__.__subclasses__()[117] }}",
             "6 attribute '__class__' begins with '_'\n"
             "16 attribute '__base__' begins with '_'\n"
             "25 attribute '__subclasses__' begins with '_'\n");
    FINDINGS("{{ ''.__class__.__mro__[1].__subclasses__() }}",
             "6 attribute '__class__' begins with '_'\n"
             "16 attribute '__mro__' begins with '_'\n"
             "27 attribute '__subclasses__' begins with '_'\n");
    // Whitespace, Unicode whitespace and bytes that are not UTF-8 between
    // the dot and the name.
    FINDINGS("{{ x .\n __dict__ }}{{ y.\xc2\xa0_z }}{{ w.\xff_v }}",
             "8 attribute '__dict__' begins with '_'\n"
             "26 attribute '_z' begins with '_'\n"
             "37 attribute '_v' begins with '_'\n");
    return 1;
}

static int test_attr_filter(void)
{
    FINDINGS("{{ x|attr('__class__') }}", "10 attr filter name '__class__' begins with '_'\n");
    FINDINGS("{{ x|attr('\\x5f\\x5fclass\\x5f\\x5f') }}", "10 attr filter name '__class__' begins with '_'\n");
    FINDINGS("{{ x|attr(\"\\u005f\\U0000005fclass__\") }}", "10 attr filter name '__class__' begins with '_'\n");
    FINDINGS("{{ x | attr ( '\\137\\137class__' ) }}", "14 attr filter name '__class__' begins with '_'\n");
    FINDINGS("{{ x|attr('\\N{LOW LINE}\\N{low line}init__') }}", "10 attr filter name '__init__' begins with '_'\n");
    FINDINGS("{{ x|attr('_' '_class__') }}", "10 attr filter name '__class__' begins with '_'\n");
    FINDINGS("{{ x|attr(name='__class__') }}", "15 attr filter name '__class__' begins with '_'\n");
    FINDINGS("{{ x|attr(name) }}", "10 attr filter name is computed: name\n");
    FINDINGS("{{ x|attr('_'~'_class__') }}", "10 attr filter name '__class__' begins with '_'\n");
    FINDINGS("{{ x|attr('na' ~ 'me') }}", "10 attr filter name is computed: 'na' ~ 'me'\n");
    FINDINGS("{{ x|attr(*['__class__']) }}", "11 attr filter name is computed: ['__class__']\n");
    FINDINGS("{% filter attr('__class__') %}x{% endfilter %}", "15 attr filter name '__class__' begins with '_'\n");
    FINDINGS("{{ x|attr('name') }}{{ x|attr('a_b') }}", "");
    return 1;
}

static int test_attribute_paths(void)
{
    FINDINGS("{{ x|map(attribute='__class__')|list }}", "19 map attribute '__class__' begins with '_'\n");
    FINDINGS("{{ x|map(attribute='a.__class__')|list }}",
             "19 map attribute 'a.__class__' has a part beginning with '_'\n");
    FINDINGS("{{ x|map('attr', '__class__')|list }}",
             "17 map('attr') attr filter name '__class__' begins with '_'\n");
    FINDINGS("{{ x|map(f, 'y') }}", "9 map filter name is computed: f\n");
    FINDINGS("{{ x|map(attribute=name) }}", "19 map attribute is computed: name\n");
    FINDINGS("{{ x|selectattr('__a') }}{{ x|sort(attribute='__b') }}{{ x|groupby('c.__d') }}"
             "{{ x|sum(attribute='_e') }}{{ x|join(',', '_f') }}{{ x|min(attribute='_g') }}",
             "16 selectattr attribute '__a' begins with '_'\n"
             "45 sort attribute '__b' begins with '_'\n"
             "67 groupby attribute 'c.__d' has a part beginning with '_'\n"
             "97 sum attribute '_e' begins with '_'\n"
             "120 join attribute '_f' begins with '_'\n"
             "147 min attribute '_g' begins with '_'\n");
    // What real templates do.
    FINDINGS("{{ x|selectattr('role', 'equalto', role)|map(attribute='function.name')|join(', ') }}"
             "{{ x|sort(attribute=0) }}",
             "");
    return 1;
}

static int test_subscripts(void)
{
    FINDINGS("{{ x['__globals__'] }}", "5 subscript '__globals__' begins with '_'\n");
    FINDINGS("{{ x[\"\\x5f_globals__\"] }}", "5 subscript '__globals__' begins with '_'\n");
    FINDINGS("{{ x['_' ~ '_class__'] }}", "5 subscript '__class__' begins with '_'\n");
    FINDINGS("{{ x['%c%c'|format(95,95) ~ 'class' ~ '%c%c'|format(95,95)] }}",
             "5 subscript '__class__' begins with '_'\n");
    FINDINGS("{{ x['%c' % 95 ~ '_class__'] }}", "5 subscript '__class__' begins with '_'\n");
    FINDINGS("{{ x['_' * 2 ~ 'class' ~ '_' * 2] }}", "5 subscript '__class__' begins with '_'\n");
    FINDINGS("{{ x[['_', '_class__']|join] }}", "5 subscript '__class__' begins with '_'\n");
    FINDINGS("{{ x[dict(__class__=1)|first] }}", "5 subscript '__class__' begins with '_'\n");
    FINDINGS("{{ x['ssalc__'|reverse ~ '__'] }}", "5 subscript '__class__' begins with '_'\n");
    // An undefined name renders as '', so this is '__class__'.
    FINDINGS("{{ x[nothing ~ '__class__'] }}", "5 subscript '__class__' begins with '_'\n");
    FINDINGS("{{ x[y or '__class__'] }}", "5 subscript '__class__' begins with '_'\n");
    FINDINGS("{{ x['a']['__b'] }}{{ x[y['__c']] }}",
             "10 subscript '__b' begins with '_'\n"
             "26 subscript '__c' begins with '_'\n");
    // Keys from data, and constants not beginning with '_'.
    FINDINGS("{{ x[message.role] }}{{ x[loop.index0 + 1] }}{{ x[0] }}{{ x[-1] }}{{ x['content'] }}"
             "{{ x[key] }}{{ x['a'|upper] }}{{ x[1:] }}{{ x['%s' % y] }}",
             "");
    return 1;
}

static int test_names_through_variables(void)
{
    FINDINGS("{% set a = '_' %}{{ x[a ~ a ~ 'class' ~ a ~ a] }}", "22 subscript '__class__' begins with '_'\n");
    FINDINGS("{% set a %}__class__{% endset %}{{ ''[a] }}", "38 subscript '__class__' begins with '_'\n");
    FINDINGS("{% macro m(k) %}{{ x[k] }}{% endmacro %}{{ m('__class__') }}",
             "21 subscript '__class__' begins with '_'\n");
    FINDINGS("{% macro u() %}__class__{% endmacro %}{{ x[u()] }}", "43 subscript '__class__' begins with '_'\n");
    FINDINGS("{% for k in ['__globals__'] %}{{ x[k] }}{% endfor %}", "35 subscript '__globals__' begins with '_'\n");
    FINDINGS("{% set ns = namespace(k='__class__') %}{{ x[ns.k] }}", "44 subscript '__class__' begins with '_'\n");
    // Used before it is assigned, as a macro defined first may be.
    FINDINGS("{% macro m() %}{{ x[k] }}{% endmacro %}{% set k = '_' ~ '_init__' %}",
             "20 subscript '__init__' begins with '_'\n");
    // Loops over constant pairs, as functionary's template does.
    FINDINGS("{% for f, n in [('maximum', 'Max'), ('minimum', 'Min')] %}{{ p[f] }}{% endfor %}", "");
    FINDINGS("{% set role = 'user' %}{% set role = 'assistant' %}{{ x[role] }}", "");
    return 1;
}

static int test_format_fields(void)
{
    FINDINGS("{{ '{0.__class__}'.format(x) }}", "3 str.format field attribute '__class__' begins with '_'\n");
    FINDINGS("{% set f = '{0.' ~ '__init__}' %}{{ f.format(x) }}",
             "38 str.format field attribute '__init__' begins with '_'\n");
    FINDINGS("{{ '{0[__class__]} {{0.__x}} {0.name}'.format(x) }}", "");
    return 1;
}

/* ==== Not code ==== */

static int test_text_comments_and_raw(void)
{
    FINDINGS("x.__class__ {# {{ x.__class__ }} #} {% raw %}{{ x.__class__ }}{% endraw %} "
             "{%- raw -%}{{ x['__a'] }}{%+ endraw +%}",
             "");
    FINDINGS("{{ '}}' ~ x.__class__ }}", "12 attribute '__class__' begins with '_'\n");
    FINDINGS("{{ {'a': {'b': 1}} }}{{ x.__init__ }}", "26 attribute '__init__' begins with '_'\n");
    FINDINGS("{%- if x -%}{{- y.__dict__ -}}{%+ endif +%}", "18 attribute '__dict__' begins with '_'\n");
    FINDINGS("{{ 'x.__class__' }}{{ \"['__class__']\" }}", "");
    return 1;
}

/* ==== Hostile bytes ==== */

static int test_unterminated(void)
{
    // Jinja refuses a template whose string does not end: nothing after it
    // is code.
    FINDINGS("{{ x.__a }}{{ '", "5 attribute '__a' begins with '_'\n");
    FINDINGS("{{ x.__a ", "5 attribute '__a' begins with '_'\n");
    FINDINGS("{# {{ x.__a }}", "");
    FINDINGS("{% raw %}{{ x.__a }}", "");
    FINDINGS("{{ x[", "");
    FINDINGS("{{ x|attr(", "");
    FINDINGS("{{ x['\\x5", "");
    FINDINGS("{{ x['\\", "");
    FINDINGS("{", "");
    FINDINGS("", "");
    return 1;
}

static int test_hostile_bytes(void)
{
    static const char nul[] = "{{ x\0.__a }}\0{{ y.\0_b }}";
    lines got;
    EXPECT(audit_bytes(nul, sizeof nul - 1, &got));
    EXPECT_STR(got.buf, "6 attribute '__a' begins with '_'\n");
    free(got.buf);
    // Every byte value at every place of a short template.
    char t[] = "{{ x['_a'|attr(y)] }}";
    for (size_t i = 0; i < sizeof t - 1; i++) {
        for (int c = 0; c < 256; c++) {
            const char keep = t[i];
            t[i] = (char)c;
            EXPECT(audit_bytes(t, sizeof t - 1, &got));
            free(got.buf);
            t[i] = keep;
        }
    }
    return 1;
}

static char *repeat(const char *head, const char *unit, size_t times, const char *tail, size_t *len)
{
    const size_t h = strlen(head), u = strlen(unit), t = strlen(tail);
    *len = h + u * times + t;
    char *s = malloc(*len + 1);
    if (!s)
        abort();
    memcpy(s, head, h);
    for (size_t i = 0; i < times; i++)
        memcpy(s + h + i * u, unit, u);
    memcpy(s + h + u * times, tail, t + 1);
    return s;
}

static int test_deep_nesting(void)
{
    size_t n;
    char *s = repeat("{{ ", "(", 100000, "x['__a']", &n);
    lines got;
    EXPECT(audit_bytes(s, n, &got));
    EXPECT_STR(got.buf, "0 tag has more than 4096 tokens, the rest are not read as expressions\n"
                        "27 expression nests brackets deeper than 24, not followed\n");
    free(got.buf);
    free(s);
    s = repeat("{{ ", "x[", 50000, "1", &n);
    EXPECT(audit_bytes(s, n, &got));
    EXPECT_STR(got.buf, "0 tag has more than 4096 tokens, the rest are not read as expressions\n"
                        "52 expression nests brackets deeper than 24, not followed\n");
    free(got.buf);
    free(s);
    // 24 brackets are followed: 23 parentheses and the subscript's.
    FINDINGS("{{ (((((((((((((((((((((((x['__a']))))))))))))))))))))))) }}",
             "28 subscript '__a' begins with '_'\n");
    return 1;
}

static int test_huge_templates(void)
{
    size_t n;
    // Many findings: the first 1000, then how many more.
    char *s = repeat("", "{{ x.__a }}", 5000, "", &n);
    lines got;
    EXPECT(audit_bytes(s, n, &got));
    EXPECT_EQ(got.count, 1001);
    EXPECT(strstr(got.buf, "10994 template has 4000 more findings\n") != NULL);
    free(got.buf);
    free(s);
    // One tag of a million tokens: the rest still seen for attributes.
    s = repeat("{{ ", "x['a'] ~ ", 150000, "y.__z }}", &n);
    EXPECT(audit_bytes(s, n, &got));
    char want[160];
    snprintf(want, sizeof want, "0 tag has more than 4096 tokens, the rest are not read as expressions\n"
                                "%zu attribute '__z' begins with '_'\n", n - 6);
    EXPECT_STR(got.buf, want);
    free(got.buf);
    free(s);
    // More assignments than are followed.
    char *many = malloc(40 * 400 + 64);
    size_t o = 0;
    for (int i = 0; i < 400; i++)
        o += (size_t)sprintf(many + o, "{%% set v%d = 'a' %%}", i);
    o += (size_t)sprintf(many + o, "{{ x[v399] }}");
    EXPECT(audit_bytes(many, o, &got));
    EXPECT(strstr(got.buf, "tag assigns more variables than are followed, taken as data\n") != NULL);
    EXPECT_EQ(got.count, 1);
    free(got.buf);
    free(many);
    // Quotes and escapes, again and again, in one tag: linear.
    s = repeat("{{ x.__a }}", "{{ '\\'", 200000, "", &n);
    EXPECT(audit_bytes(s, n, &got));
    EXPECT_STR(got.buf, "5 attribute '__a' begins with '_'\n"
                        "11 tag has more than 4096 tokens, the rest are not read as expressions\n");
    free(got.buf);
    free(s);
    s = repeat("", "{{ {% {# ", 200000, "", &n);
    EXPECT(audit_bytes(s, n, &got));
    free(got.buf);
    free(s);
    return 1;
}

static int test_keys(void)
{
    EXPECT(ggt_is_chat_template_key((ggt_str){"tokenizer.chat_template", 23}));
    EXPECT(ggt_is_chat_template_key((ggt_str){"tokenizer.chat_template.tool_use", 32}));
    EXPECT(!ggt_is_chat_template_key((ggt_str){"tokenizer.chat_template.", 24}));
    EXPECT(!ggt_is_chat_template_key((ggt_str){"tokenizer.chat_templates", 24}));
    EXPECT(!ggt_is_chat_template_key((ggt_str){"tokenizer.chat_templat", 22}));
    return 1;
}

/* ==== Real templates ==== */

static int test_real_templates(const char *dir)
{
    DIR *d = opendir(dir);
    EXPECT(d != NULL);
    unsigned n = 0;
    int ok = 1;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        const size_t len = strlen(ent->d_name);
        if (len < 7 || strcmp(ent->d_name + len - 6, ".jinja") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        FILE *f = fopen(path, "rb");
        EXPECT(f != NULL);
        static char buf[1 << 20];
        const size_t size = fread(buf, 1, sizeof buf, f);
        fclose(f);
        lines got;
        EXPECT(audit_bytes(buf, size, &got));
        if (got.count) {
            fprintf(stderr, "%s: findings in a real template:\n%s", ent->d_name, got.buf);
            ok = 0;
        }
        free(got.buf);
        n++;
    }
    closedir(d);
    EXPECT(n >= 25);
    printf("%u real templates, no finding\n", n);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_template REAL_TEMPLATES_DIR\n");
        return 2;
    }
    int ok = 1;
    ok &= test_attribute_chains();
    ok &= test_attr_filter();
    ok &= test_attribute_paths();
    ok &= test_subscripts();
    ok &= test_names_through_variables();
    ok &= test_format_fields();
    ok &= test_text_comments_and_raw();
    ok &= test_unterminated();
    ok &= test_hostile_bytes();
    ok &= test_deep_nesting();
    ok &= test_huge_templates();
    ok &= test_keys();
    ok &= test_real_templates(argv[1]);
    printf("template: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
