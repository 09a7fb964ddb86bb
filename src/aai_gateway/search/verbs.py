"""French and Spanish verb forms: query words the lexicon does not know as written, but whose
infinitive it knows. The lexicon writes verbs as infinitives (`commander`, `pedir`); people type
them conjugated, as imperatives with a pronoun fused on (`pídeme`, `recuérdame`, `envíale`), as
participles (`réservé`, `gastado`) or in the present (`je cherche`, `quiero`).

Candidates only, for words already case- and accent-folded (`pídeme` is `pideme`): the lexicon
says which exist, in which language (lexicon.py, `verb_form_concepts`). Only query words that
nothing else matched are looked up, so a candidate that happens to be some other word costs
nothing elsewhere. Irregular verbs are left out, apart from the imperatives people say most.
"""

from __future__ import annotations

MIN_VERB_FORM = 4
"""Shorter words are pronouns, articles and auxiliaries, never a verb worth guessing."""
MIN_BASE = 3
"""What is left of a word once an ending is taken off: shorter, and it is no verb's stem."""

SPANISH_CLITICS = (
    "selos", "selas", "noslo", "nosla", "selo", "sela", "melo", "mela", "telo", "tela",
    "nos", "les", "los", "las", "me", "te", "le", "lo", "la", "se",
)  # fmt: skip
"""Pronouns Spanish writes onto an imperative, infinitive or gerund (`pídeme`, `enviarle`,
`mándaselo`, `buscándolos`), longest first."""

SPANISH_IRREGULAR = {
    "haz": "hacer", "pon": "poner", "ten": "tener", "sal": "salir", "ven": "venir", "di": "decir",
    "ve": "ir", "quiero": "querer", "pido": "pedir", "pide": "pedir", "hecho": "hacer",
    "puesto": "poner", "dicho": "decir", "vuelto": "volver", "escrito": "escribir", "visto": "ver",
}  # fmt: skip
FRENCH_IRREGULAR = {
    "mets": "mettre", "mis": "mettre", "mise": "mettre", "prends": "prendre", "pris": "prendre",
    "fais": "faire", "fait": "faire", "dis": "dire", "ecris": "ecrire", "ecrit": "ecrire",
    "lis": "lire", "lu": "lire", "vois": "voir", "vu": "voir", "ouvert": "ouvrir",
    "eteins": "eteindre", "eteint": "eteindre", "envoie": "envoyer", "envoies": "envoyer",
    "paie": "payer", "recois": "recevoir", "recu": "recevoir", "vends": "vendre", "vendu": "vendre",
    "rends": "rendre", "rendu": "rendre", "dors": "dormir", "cours": "courir", "couru": "courir",
}  # fmt: skip

# Spanish vowel changes in the stem of some verbs, said form -> infinitive form
# (`recuerda`: recordar, `cierra`: cerrar, `pide`: pedir)
_SPANISH_STEM_CHANGES = (("ue", "o"), ("ie", "e"), ("i", "e"))
# (ending of the form, endings of the infinitive), longest first within each group
_SPANISH_ENDINGS = (
    ("ando", ("ar",)), ("iendo", ("er", "ir")), ("ados", ("ar",)), ("adas", ("ar",)),
    ("idos", ("er", "ir")), ("idas", ("er", "ir")), ("ado", ("ar",)), ("ada", ("ar",)),
    ("ido", ("er", "ir")), ("ida", ("er", "ir")), ("amos", ("ar",)), ("emos", ("er",)),
    ("imos", ("ir",)), ("aste", ("ar",)), ("iste", ("er", "ir")), ("io", ("er", "ir")),
    ("as", ("ar",)), ("es", ("er", "ir")), ("an", ("ar",)), ("en", ("er", "ir")),
    ("a", ("ar",)), ("e", ("er", "ir", "ar")), ("o", ("ar", "er", "ir")), ("i", ("er", "ir")),
)  # fmt: skip
_FRENCH_ENDINGS = (
    ("erons", ("er",)), ("eront", ("er",)), ("erais", ("er",)), ("erait", ("er",)),
    ("erai", ("er",)), ("eras", ("er",)), ("erez", ("er",)), ("era", ("er",)),
    ("issons", ("ir",)), ("issez", ("ir",)), ("ees", ("er",)), ("ant", ("er",)),
    ("ons", ("er", "ir", "re")), ("ez", ("er", "ir", "re")), ("ee", ("er",)), ("es", ("er",)),
    ("is", ("ir",)), ("it", ("ir",)), ("ie", ("ir",)), ("ds", ("dre",)), ("ins", ("indre",)),
    ("e", ("er",)), ("i", ("ir",)),
)  # fmt: skip


def _with_endings(word: str, endings: tuple[tuple[str, tuple[str, ...]], ...]) -> list[str]:
    forms: list[str] = []
    for ending, infinitives in endings:
        base = word[: -len(ending)]
        if word.endswith(ending) and len(base) >= MIN_BASE:
            forms += [base + infinitive for infinitive in infinitives]
    return forms


def _spanish_stems(form: str) -> list[str]:
    """A said form and the same with its last stem vowel changed back (`recuerd-`: `record-`)."""
    out = [form]
    for said, written in _SPANISH_STEM_CHANGES:
        at = form.rfind(said, 0, max(len(form) - 2, 0))
        if at > 0:
            out.append(form[:at] + written + form[at + len(said) :])
            break
    return out


def spanish_verb_forms(word: str) -> list[str]:
    """The infinitives a Spanish word may be (folded): with the pronouns fused on it taken off
    (`pideme`: pide; `enviarle`: enviar), from the imperative, present, preterite, participle
    and gerund endings, with `ue`, `ie` and `i` stems changed back (`recuerda`: recordar)."""
    if len(word) < MIN_VERB_FORM or not word.isalpha():
        return []
    bases = [word]
    for clitic in SPANISH_CLITICS:
        if word.endswith(clitic) and len(word) - len(clitic) >= MIN_BASE:
            bases.append(word[: -len(clitic)])
            if clitic in ("nos", "les", "los", "las") and word[: -len(clitic)].endswith("se"):
                bases.append(word[: -len(clitic) - 2])  # `mandaselos`
    forms: list[str] = []
    for base in bases:
        if base in SPANISH_IRREGULAR:
            forms.append(SPANISH_IRREGULAR[base])
        if base != word:
            forms.append(base)  # `enviarle`: enviar; `ponme`: pon
        for candidate in _with_endings(base, _SPANISH_ENDINGS):
            forms += _spanish_stems(candidate)
    return list(dict.fromkeys(form for form in forms if form != word))


def french_verb_forms(word: str) -> list[str]:
    """The infinitives a French word may be (folded): from the present, imperative, participle,
    future and gerund endings (`annule`, `reserve`, `reserves`, `finis`, `prends`, `eteins`),
    with a doubled consonant made single (`appelle`: appeler) and `oie`/`aie` for `oyer`/`ayer`."""
    if len(word) < MIN_VERB_FORM - 1 or not word.isalpha():
        return []
    forms = [FRENCH_IRREGULAR[word]] if word in FRENCH_IRREGULAR else []
    for candidate in _with_endings(word, _FRENCH_ENDINGS):
        forms.append(candidate)
        stem = candidate[:-2]
        if len(stem) > MIN_BASE and stem[-1] == stem[-2] and stem[-1] in "lt":
            forms.append(stem[:-1] + "er")  # `appelle`: appeler; `jette`: jeter
        if stem.endswith(("oi", "ai")):
            forms.append(stem[:-1] + "yer")  # `nettoie`: nettoyer; `essaie`: essayer
    return list(dict.fromkeys(form for form in forms if form != word))


def german_imperatives(word: str) -> list[str]:
    """The infinitives a German imperative or present form may be (folded): `such`, `schick`,
    `trag … ein` (suchen, schicken, eintragen), `erinner` (erinnern), `schickst` (schicken)."""
    if len(word) < MIN_BASE or not word.isalpha():
        return []
    forms = [word + "n"] if word.endswith(("el", "er")) else [word + "en"]
    if word.endswith("st") and len(word) - 2 >= MIN_BASE:
        forms.append(word[:-2] + "en")
    return forms
