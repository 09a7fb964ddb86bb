"""Stopwords: words that say nothing about what a query wants (`the`, `of`, `ich`), left out of
a query's terms unless nothing else is left. Descriptors keep them (IDF weighs them down; and
`to do` must still become `todo`, which happens before this list applies). European languages
only: a Chinese character such as 给 is a function word in one place and part of a word in
another (发给), and Japanese particles of one kana are never terms at all (tokens.py).
Spoken French, Spanish and German are in it too: clitic pronouns, auxiliaries and fillers
(`lui`, `ça`, `necesito`, `podrías`, `hab`, `kannst`); a filler that is also a word of the
concept lexicon stays a term (`hoy`, `heute`: today; `sous`: money).
"""

from __future__ import annotations

from collections.abc import Callable

from .normalize import HIRAGANA_TO_KATAKANA
from .tokens import fold_word, stem

_WORDS = (
    # English
    "a an the to of in on at for with by from and or is are was be been it its this that these those "
    "i me my mine we our us you your he she they them their please can could would will shall should "
    "what which who whom how when where why do does did some any just also into about there here "
    "have has had am so if then than very too up out as "
    "want need like let get got go going something anything thing things again now "
    "tomorrow yesterday tonight morning evening week month year ago "
    # German
    "der die das den dem des ein eine einen einem einer und oder ich mich mir mein meine meinen du "
    "dich dein wir uns unser ist sind war im am an auf aus bei für mit nach von vom zu zum zur bitte "
    "wie was welche welcher welches wo wann ob es sie er nicht kein keine noch "
    "dir dem den diese dieser dieses diesen alles etwas mal doch schon gerade jetzt gibt kann soll "
    "will möchte möchten habe hast hat haben bin bist sein ihr ihre ihren ihrem mach machen "
    "nächste nächsten nächster nächstes letzte letzten letzter letztes morgen gestern früh "
    "woche monat jahr fürs vom beim ins "
    "meinem meiner meines deinem deiner deines ihm ihn ihnen man eines dass wenn aber denn so auch "
    "nur sehr ganz eben ja nee ne bisschen gern gerne kannst könntest könnten würdest würde muss "
    "musst müssen sollte darf wollen willst hab hätte wär wird werden wurde um durch gegen ohne bis "
    "seit hier da dort jemand nichts dies wer wen wem warum eigentlich irgendwie irgendwas hey hallo "
    "danke okay ok kurz schnell "
    # French
    "le la les un une des de du et ou je me moi mon ma mes tu te toi ton ta tes nous notre vous votre "
    "est sont en dans pour avec sur au aux ce cette ces qui que quoi comment où il elle ils elles "
    "ne pas s'il stp svp "
    "tout toute mais veux voudrais peux peut faut fais faire suis ai as a été "
    "prochain prochaine prochains dernier dernière derniers demain hier matin soir semaine mois "
    "lui leur leurs y on nos vos sa son ses cet ça ca c quel quelle quels quelles trop bien plus "
    "moins aussi juste encore déjà vraiment genre truc bah ben hein bon alors donc voilà merci "
    "aimerais pourrais pouvez pourriez veut vouloir besoin dois devrais faudrait faudra va vais vas "
    "allez être avoir avons avez ont était sera serait chez par sans entre vers jusqu depuis "
    "pendant quand comme si oui non rien quelque chose quelqu peu beaucoup là ici maintenant vite "
    # Spanish
    "el los las unos unas y o del para con por mi mis tu tus nos nuestro es son al que qué cómo "
    "donde dónde cuando cuándo se su sus lo le les favor "
    "este esta estos estas ese esa quiero quisiera puedes puede hay hace hacer tengo tiene "
    "próximo próxima último última mañana ayer tarde semana mes año "
    "me te os mí ti un una muy más menos ya aún todavía también pero sí no algo alguien nada cosa "
    "poco bien porfa porfis oye pues bueno necesito necesitaría quieres podrías puedo debo tienes "
    "tenemos voy vas va vamos ir estoy está estás están estar ser soy eres fue he has ha hemos han "
    "había sobre entre hasta desde sin hacia según cuál cuáles quién como así aquí allí ahí ahora "
    "luego ahorita mío mía tuyo suyo esto eso cada gracias hola gustaría"
)
STOPWORDS: frozenset[str] = frozenset(_WORDS.split())

# Chinese and Japanese: function characters and words a query's characters and pairs leave out
# (`帮我查一下`: 帮, 我, 一下). Only as a query's own CJK terms, never as parts of a lexicon word
# (给 in 发给, 下 in 下载 stay). Japanese particles of one kana are never terms at all (tokens.py).
_CJK_WORDS = (
    # Chinese
    "的 了 吗 呢 吧 啊 呀 嘛 么 我 你 您 他 她 它 们 我们 你们 这 那 这个 那个 这些 那些 是 在 有 和 与 "
    "把 被 给 让 请 帮 帮我 想 要 能 可以 都 也 就 还 又 很 太 个 些 点 一 一下 一个 一些 一点 下 上 "
    "什么 怎么 怎样 哪 哪个 哪些 多少 几 如何 为什么 吗 啥 里 中 用 从 到 对 去 来 做 弄 搞 看看 "
    # Japanese
    "私 僕 俺 この その あの これ それ あれ こと もの ちょっと して します ください たい ます です "
    "でき ある いる なる ない ため から まで より など"
)
CJK_STOPWORDS: frozenset[str] = frozenset(
    word.translate(HIRAGANA_TO_KATAKANA)  # folded as query terms are
    for word in _CJK_WORDS.split()
)


def stop_terms(stem: Callable[[str], str]) -> frozenset[str]:
    """The stopwords as query terms (folded and stemmed like every word: `für` is `fur`)."""
    return frozenset(stem(fold_word(word)) for word in STOPWORDS)


_stops: frozenset[str] | None = None


def query_stop_terms() -> frozenset[str]:
    """The stopwords as stemmed terms, computed once (it needs the stemmer, loaded with the first
    index)."""
    global _stops  # noqa: PLW0603 (computed once, then shared: it never changes)
    if _stops is None:
        _stops = stop_terms(stem)
    return _stops
