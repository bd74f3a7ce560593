"""Tests of docs/md_filter.py, the markdown filter between the chapters and Doxygen
(ctest: Docs.FilterAndPages)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from md_filter import convert_footnotes, filter_page  # noqa: E402

BOOK = {
    "root": "/repo",
    "pages": [
        {"path": "README.md", "label": "index", "title": "The book", "chapter": False},
        {"path": "chapters/04-relative/README.md", "label": "ch04", "title": "Chapter 4", "chapter": True},
        {"path": "chapters/05-rope/README.md", "label": "ch05", "title": "Chapter 5", "chapter": True},
        {"path": "chapters/06-alibi/README.md", "label": "ch06", "title": "Chapter 6", "chapter": True},
        {"path": "lab/README.md", "label": "experiments_bench", "title": "Bench", "chapter": False},
        {"path": "docs/coursework/instructors.md", "label": "coursework_instructors",
         "title": "Instructors", "chapter": False},
        {"path": "docs/coursework/students.md", "label": "coursework_students",
         "title": "Students", "chapter": False},
    ],
}


def text(s):
    return filter_page(s)


class Math(unittest.TestCase):
    def test_inline_math(self):
        self.assertEqual(text("angle $m\\theta_i$ here"), "angle \\f$m\\theta_i\\f$ here")

    def test_display_math_on_one_line_and_over_several(self):
        self.assertEqual(text("$$a = b$$"), "\\f[a = b\\f]")
        self.assertEqual(text("$$\na = b,\nc = d\n$$"), "\\f[\na = b,\nc = d\n\\f]")

    def test_inline_math_may_continue_on_the_next_line(self):
        self.assertEqual(text("so $a +\nb$ ends"), "so \\f$a +\nb\\f$ ends")

    def test_code_span_with_dollars_stays(self):
        self.assertEqual(text("run `echo $HOME $PATH` and $x$"), "run `echo $HOME $PATH` and \\f$x\\f$")
        self.assertEqual(text("``a $b` $c``"), "``a $b` $c``")

    def test_fenced_block_with_dollars_stays(self):
        block = "```sh\nx=$((1 + 2)) && echo $x $$\n```"
        self.assertEqual(text("before $y$\n\n" + block + "\n"), "before \\f$y\\f$\n\n" + block + "\n")
        tilde = "~~~\n$a$ $$b$$\n~~~"
        self.assertEqual(text(tilde), tilde)

    def test_fence_closes_only_with_its_own_kind(self):
        block = "````\n```\n$a$\n```\n````"
        self.assertEqual(text(block + "\n$b$"), block + "\n\\f$b\\f$")

    def test_escaped_dollar_stays_a_dollar(self):
        self.assertEqual(text("costs \\$5 and \\$6"), "costs \\$5 and \\$6")
        self.assertEqual(text("$a \\$ b$"), "\\f$a \\$ b\\f$")

    def test_unpaired_dollar_in_prose_is_a_dollar(self):
        self.assertEqual(text("it costs $5 and more"), "it costs \\$5 and more")
        # The second $ follows a space, so it cannot close: two prices, no math.
        self.assertEqual(text("between $5 and $10 a month"), "between \\$5 and \\$10 a month")

    def test_dollar_followed_by_a_digit_does_not_close(self):
        self.assertEqual(text("$x$5"), "\\$x\\$5")

    def test_no_math_across_a_blank_line(self):
        self.assertEqual(text("a $b\n\nc$ d"), "a \\$b\n\nc\\$ d")
        self.assertEqual(text("$$a\n\nb$$"), "\\$\\$a\n\nb\\$\\$")

    def test_quotes_around_math_become_entities(self):
        # Doxygen would print the \\f$ of a formula between straight quotes as text.
        self.assertEqual(text('says "depends on $q - p$" here'),
                         'says &quot;depends on \\f$q - p\\f$&quot; here')
        self.assertEqual(text('a "quote" and $x$ and "b"'), 'a "quote" and \\f$x\\f$ and "b"')

    def test_pipes_in_code_in_a_table(self):
        self.assertEqual(text("| `-DPE_ARCH=auto\\|avx2` | auto |"), "| <tt>\\-DPE\\_ARCH=auto\\|avx2</tt> | auto |")
        self.assertEqual(text("outside `a\\|b`"), "outside `a\\|b`")

    def test_code_with_a_closing_quote_becomes_tt(self):
        # Doxygen reads `word' as a LaTeX quote: such a span would lose its code font.
        self.assertEqual(text("its name (`'b'` here)"), "its name (<tt>'b'</tt> here)")
        self.assertEqual(text("`-L 'task5\\.'` runs"), "<tt>\\-L 'task5\\\\.'</tt> runs")
        self.assertEqual(text("`σ' = σ (1 - σ)`"), "<tt>σ' = σ (1 \\- σ)</tt>")
        # What Doxygen would read as markup is escaped; it knows no numeric entities.
        self.assertEqual(text('`a<b && "c" ~ %f #g @h $i$ x_1*y\'`'),
                         "<tt>a&lt;b &amp;&amp; &quot;c&quot; &tilde; \\%f \\#g \\@h \\$i\\$ x\\_1\\*y'</tt>")
        self.assertEqual(text("`it's` and `f'x`"), "`it's` and `f'x`")  # Doxygen reads these
        self.assertEqual(text("```\na 'b'\n```"), "```\na 'b'\n```")

    def test_code_in_a_heading_keeps_its_words_only(self):
        self.assertEqual(text("## The `pe` command\n\nrun `pe`"), "## The pe command\n\nrun `pe`")

    def test_html_comment_stays(self):
        self.assertEqual(text("<!-- snippet: a$b -->\n$x$"), "<!-- snippet: a$b -->\n\\f$x\\f$")

    def test_an_inline_value_marker_goes_and_its_number_and_blank_stay(self):
        # Doxygen would drop a % before a comment (its no-link mark) and the blank after it.
        self.assertEqual(text("reaches 100%<!-- value: runs.a.accuracy --> on it"),
                         "reaches 100% on it")
        self.assertEqual(text("`x<!-- value: shown -->` and 21<!-- value: [a b].n?word=2 --> models"),
                         "`x<!-- value: shown -->` and 21 models")

    def test_text_without_dollars_is_unchanged(self):
        s = "# Title\n\nplain *text* with `code` and [a link](https://example.org)\n"
        self.assertEqual(text(s), s)


class Links(unittest.TestCase):
    def page(self, s, path="chapters/05-rope/README.md"):
        return filter_page(s, path, BOOK)

    def test_link_to_another_chapter_becomes_a_ref(self):
        out = self.page("see [chapter 4](../04-relative/README.md#the-t5-bias).")
        self.assertIn("see [chapter 4](@ref ch04_the_t5_bias).", out)

    def test_headings_get_the_labels_of_their_forge_anchors(self):
        out = self.page("# Five\n\n## 4. The code\n\n### `apply_rotary`, step 2\n\n## 4. The code\n")
        self.assertIn("## 4. The code {#ch05_4_the_code}", out)
        self.assertIn("### apply_rotary, step 2 {#ch05_apply_rotary_step_2}", out)
        self.assertIn("## 4. The code {#ch05_4_the_code_1}", out)
        self.assertIn("[above](@ref ch05_4_the_code)", self.page("## 4. The code\n\n[above](#4-the-code)"))

    def test_link_from_the_top_readme_and_to_a_folder(self):
        out = filter_page("[rope](chapters/05-rope/README.md), [bench](lab/)", "README.md", BOOK)
        self.assertEqual(out, "[rope](@ref ch05), [bench](@ref experiments_bench)")

    def test_a_link_whose_words_break_across_lines_becomes_one_line(self):
        out = self.page("used ([Vaswani\net al., *Attention*, 2017](../04-relative/README.md#the-t5-bias)), is")
        self.assertIn("([Vaswani et al., Attention, 2017](@ref ch04_the_t5_bias)), is", out)  # no stars

    def test_links_to_and_between_the_coursework_pages(self):
        out = self.page("see [the students' page](../../docs/coursework/students.md#build-once)")
        self.assertIn("[the students' page](@ref coursework_students_build_once)", out)
        out = filter_page("# Instructors\n\nthey start from [the students' page](students.md).\n",
                          "docs/coursework/instructors.md", BOOK)
        self.assertIn("[the students' page](@ref coursework_students)", out)
        self.assertIn("# Instructors {#coursework_instructors}", out)
        self.assertNotIn("pe-nav", out)  # not a chapter: no previous/next line

    def test_link_to_a_file_outside_the_book_keeps_its_words(self):
        self.assertIn("the file rope.hpp here", self.page("the file [rope.hpp](rope.hpp) here"))

    def test_outside_and_anchor_links_stay(self):
        s = "[paper](https://arxiv.org/abs/2104.09864) and [below](#results)"
        self.assertIn(s, filter_page(s))

    def test_figure_becomes_an_image_with_its_site_name(self):
        out = self.page("![RoPE angles](figures/rope_angles.png)")
        self.assertIn('\\image html chapters_05-rope_figures_rope_angles.png "RoPE angles"', out)

    def test_links_in_code_stay(self):
        s = "`[x](../04-relative/README.md)`"
        self.assertIn(s, self.page(s))


class Pages(unittest.TestCase):
    def test_chapter_gets_its_label_and_both_neighbours(self):
        out = filter_page("# Chapter 5: RoPE\n\ntext\n", "chapters/05-rope/README.md", BOOK)
        self.assertTrue(out.startswith("# Chapter 5: RoPE {#ch05}\n"))
        self.assertIn('\\ref ch04 "&larr; Chapter 4"', out)
        self.assertIn('\\ref ch06 "Chapter 6 &rarr;"', out)

    def test_first_and_last_chapters_have_one_neighbour(self):
        first = filter_page("# Four\n", "chapters/04-relative/README.md", BOOK)
        last = filter_page("# Six\n", "chapters/06-alibi/README.md", BOOK)
        self.assertNotIn("&larr;", first)
        self.assertNotIn("&rarr;", last)

    def test_front_page_keeps_its_title(self):
        out = filter_page("# The book\n", "README.md", BOOK)
        self.assertEqual(out, "# The book\n")

    def test_footnotes_become_numbered_notes(self):
        s = "A table[^build] and more[^two].\n\n[^build]: Built by an\n    earlier build.\n[^two]: Second.\n"
        out = convert_footnotes(s, "ch05")
        self.assertIn('A table<sup>\\ref note_ch05_build "1"</sup>', out)
        self.assertIn('more<sup>\\ref note_ch05_two "2"</sup>', out)
        self.assertIn("\\anchor note_ch05_build\n1. Built by an earlier build.", out)
        self.assertNotIn("[^build]:", out)

    def test_footnote_reference_before_a_colon(self):
        out = convert_footnotes("as quoted[^build]:\n\n| a |\n\n[^build]: Old.\n", "index")
        self.assertIn('as quoted<sup>\\ref note_index_build "1"</sup>:', out)


class LiveFigures(unittest.TestCase):
    def test_marker_becomes_the_figure_and_the_first_loads_the_shared_scripts(self):
        out = text("a\n\n<!-- live-figure: alibi -->\n\nb\n\n<!-- live-figure: t5 -->\n")
        self.assertEqual(out.count('src="live/module.js"'), 1)
        self.assertLess(out.index('src="live/live.js"'), out.index('data-figure="alibi"'))
        self.assertIn('<div class="pe-live" id="live-t5" data-figure="t5"></div>', out)
        self.assertIn('<script defer src="live/figures/t5.js"></script>', out)
        self.assertEqual(out.count("\\htmlonly"), 2)

    def test_marker_inside_a_line_or_in_code_stays_as_written(self):
        inline = "see <!-- live-figure: alibi --> here"
        self.assertEqual(text(inline), inline)
        block = "```\n<!-- live-figure: alibi -->\n```"
        self.assertEqual(text(block), block)


if __name__ == "__main__":
    unittest.main()
