import Encoding
import Testing

@Suite struct HTMLTests {
    @Test func escapesTheFiveSpecialCharacters() {
        #expect(
            HTML.escape(#"<a href="x" title='y'>Tom & Jerry</a>"#)
                == "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;")
    }

    @Test func escapesAmpersandOnceSoEntitiesDoNotSurvive() {
        #expect(HTML.escape("&amp;") == "&amp;amp;")
        #expect(HTML.escape("&#39;") == "&amp;#39;")
    }

    @Test func neutralisesScriptInjection() {
        #expect(HTML.escape(#""><script>alert(1)</script>"#) == "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;")
    }

    @Test func keepsOtherTextUnchanged() {
        #expect(HTML.escape("") == "")
        #expect(HTML.escape("Zev ID — café 😀 中文 / = ` ") == "Zev ID — café 😀 中文 / = ` ")
    }
}
