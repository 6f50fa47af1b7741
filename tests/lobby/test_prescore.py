"""The lobby's pre-score (eko/lobby/prescore.py): speak about a curiosity being discussed or a
fact answering an open question; keep quiet otherwise. One family per test, both languages."""

from __future__ import annotations

import pytest

from eko.lobby.prescore import Known, Prescore, Spoken, names, open_questions, prescore, says_it

KRAKEN = Known("g1", "Kraken FM", "C'est quoi exactement Kraken FM ?")
KUBE = Known("g2", "Kubernetes", "Je veux mieux comprendre comment on utilise Kubernetes")
LAMBERT = Known("g3", "Hélène Lambert", "Qui est Hélène Lambert ?")
SOURDOUGH = Known("g4", "sourdough", "I'd like to know how a sourdough starter works")
MEETING = Known("f1", "réunion d'équipe", "La réunion d'équipe a lieu le mardi à 10h")
VPN = Known("f2", "staging VPN", "To get on the staging VPN, ask Ops for a WireGuard config")
BAR = Known("f3", "pot de Marc", "Le pot de Marc est au bar Le Perchoir")


def said(*lines: tuple[str, str]) -> list[Spoken]:
    return [Spoken(speaker, text, by_assistant=speaker == "Eko") for speaker, text in lines]


def decide(
    lines: list[Spoken], goals: tuple[Known, ...] = (), facts: tuple[Known, ...] = ()
) -> Prescore:
    return prescore(lines, goals=list(goals), facts=list(facts))


@pytest.mark.parametrize(
    ("lines", "goal"),
    [
        ([("David", "je bosse sur Kraken FM cet aprem"), ("Lucie", "cool")], KRAKEN),
        ([("Léa", "je migre l'api sur le cluster kube demain")], KUBE),  # a clipped form
        ([("Paul", "mme lambert a validé le budget")], LAMBERT),  # the longest word alone
        ([("Ben", "baking my first sourdough loaf on saturday")], SOURDOUGH),
    ],
)
def test_a_curiosity_whose_subject_is_being_discussed_is_posed(
    lines: list[tuple[str, str]], goal: Known
) -> None:
    score = decide(said(*lines), goals=(KRAKEN, KUBE, LAMBERT, SOURDOUGH))
    assert (score.action, score.kind, score.item) == ("message", "goal", goal)


def test_nothing_is_said_when_no_subject_is_named_or_only_the_assistant_spoke() -> None:
    chatter = said(("Lucie", "on mange où ce midi ?"), ("David", "sushi"))
    assert decide(chatter, goals=(KRAKEN,), facts=(MEETING,)).action == "pass"
    after_eko = said(("David", "Kraken FM ce soir ?"), ("Eko", "C'est quoi Kraken FM ?"))
    assert decide(after_eko, goals=(KRAKEN,)).reason.startswith("nobody has spoken")


@pytest.mark.parametrize(
    "text",
    [
        "Corentin a perdu son père hier, il ne sera pas sur Kraken FM",
        "my dad is in hospital, no Kraken FM tonight",
        "honestly I'm done arguing about Kraken FM, you never listen",
    ],
)
def test_a_sensitive_moment_keeps_the_assistant_quiet(text: str) -> None:
    score = decide(said(("David", text)), goals=(KRAKEN,))
    assert score.action == "pass" and "sensitive" in score.reason


def test_a_curiosity_a_person_already_explained_is_not_asked() -> None:
    by_name = said(("David", "pour ceux qui demandaient : Kraken FM c'est notre webradio"))
    assert decide(by_name, goals=(KRAKEN,)).action == "pass"
    by_pronoun = said(
        ("Thomas", "c'est quoi kraken fm ?"), ("Amel", "c'est notre webradio interne")
    )
    assert decide(by_pronoun, goals=(KRAKEN,)).action == "pass"
    # A remark after a statement is not an explanation: the curiosity is still open.
    remark = said(("Mickael", "j'ai pris Kraken FM premium"), ("David", "c'est le jour et la nuit"))
    assert decide(remark, goals=(KRAKEN,)).action == "message"


@pytest.mark.parametrize(
    ("lines", "fact"),
    [
        ([("Lucie", "la réunion d'équipe c'est quel jour déjà ?")], MEETING),
        (
            [("Ben", "anyone know how I get on the staging vpn?"), ("Lucy", "no idea tbh")],
            VPN,
        ),
        (
            [("Sarah", "la réunion d'équipe c'est quand ?"), ("Paul", "jsp, pas vu le mail")],
            MEETING,
        ),
    ],
)
def test_a_fact_answers_a_question_nobody_answered(
    lines: list[tuple[str, str]], fact: Known
) -> None:
    score = decide(said(*lines), goals=(KRAKEN,), facts=(MEETING, VPN, BAR))
    assert (score.action, score.kind, score.item) == ("message", "fact", fact)
    assert score.question is not None and score.question.text == lines[0][1]


def test_a_question_a_person_answered_or_put_to_someone_is_left_to_people() -> None:
    answered = said(
        ("Lucie", "la réunion d'équipe c'est quel jour ?"),
        ("David", "mardi à 10h"),
        ("Lucie", "merci"),
    )
    assert open_questions(answered) == []
    assert decide(answered, facts=(MEETING,)).action == "pass"
    to_david = said(("Simon", "David, tu peux me dire quand est la réunion d'équipe ?"))
    assert decide(to_david, facts=(MEETING,)).action == "pass"


def test_a_question_about_when_needs_a_fact_that_says_when() -> None:
    when = said(("Léa", "le pot de marc c'est à quelle heure ?"), ("Hugo", "bonne question"))
    assert decide(when, facts=(BAR,)).action == "pass"
    where = said(("Léa", "le pot de marc c'est où ?"))
    assert decide(where, facts=(BAR,)).item == BAR


def test_names_needs_every_word_of_a_short_subject() -> None:
    assert names("plan Max", "j'ai pris le plan max")
    assert not names("plan Max", "on fait un plan pour demain")
    assert not names("Kraken FM", "il pleut")


def test_a_written_message_must_do_what_was_decided() -> None:
    pose = Prescore("message", "", "goal", Known("g", "Corentin", "Qui est Corentin ?"))
    assert says_it(pose, "Au fait, qui est Corentin ?")
    assert not says_it(pose, "Corentin est un professionnel de la communication.")  # answered
    assert not says_it(pose, "Je suis désolé, qui est Corentin ?")
    assert not says_it(pose, "C'est quoi le plan Max ?")
    wish = Prescore("message", "", "goal", KUBE)
    assert says_it(wish, "Je veux mieux comprendre comment on utilise Kubernetes ici.")
    give = Prescore("message", "", "fact", Known("f", "Mickael", "Mickael est le CTO"))
    assert says_it(give, "Mickael est le CTO, je crois.")
    assert not says_it(give, "Je suis Eko, votre assistant de salon.")


def test_a_possessive_subject_is_not_named_by_its_owner_alone() -> None:
    job = Known("g5", "Hannah's new job", "What is Hannah's new job in Dublin?")
    landing = said(("Leo", "what time does hannah land friday?"), ("Ivy", "7:40 at gatwick"))
    assert decide(landing, goals=(job,)).action == "pass"
    talk = said(("Leo", "hannah starts her new job in dublin monday"))
    assert decide(talk, goals=(job,)).item == job


@pytest.mark.parametrize(
    "lines",
    [
        [("Ella", "hollis farm this weekend?"), ("Jack", "what's hollis farm"),
         ("Ella", "pick your own strawberry place 20 min out of town")],
        [("Arnaud", "c'est quoi hollis farm ?"), ("Mélanie", "une ferme cueillette pas loin")],
    ],
)  # fmt: skip
def test_a_question_asking_what_the_subject_is_answered_by_another_person_explains_it(
    lines: list[tuple[str, str]],
) -> None:
    farm = Known("g6", "Hollis Farm", "What is Hollis Farm?")
    assert decide(said(*lines), goals=(farm,)).action == "pass"
    # A question about something else that names the subject is not one about what it is.
    problem = said(
        ("Mickael", "j'ai réglé le souci de hollis farm"),
        ("David", "c'était quoi le problème avec hollis farm ?"),
        ("Mickael", "un STUN mal configuré"),
    )
    assert decide(problem, goals=(farm,)).item == farm
    # The same question left unanswered is still worth posing.
    assert decide(said(*lines[:-1]), goals=(farm,)).item == farm


@pytest.mark.parametrize(
    "replies",
    [
        [("Pete", "no idea tbh"), ("Ruby", "same, haven't been in ages")],
        [("Maxime", "attends je cherche dans mes msgs")],
        [("Zoe", "yeah but i forgot where it is")],
    ],
)
def test_agreeing_with_no_idea_or_stalling_does_not_answer_a_question(
    replies: list[tuple[str, str]],
) -> None:
    lines = said(("Jen", "where is the staging VPN config?"), *replies)
    assert [q.text for q in open_questions(lines)] == ["where is the staging VPN config?"]
    assert decide(lines, facts=(VPN,)).item == VPN


def test_a_fact_answers_a_question_that_names_what_it_says_or_refers_back() -> None:
    badges = Known(
        "f4", "Gérald Mercier", "Gérald Mercier est parti à la retraite, Samia gère les badges"
    )
    asked = said(("Yann", "qqn sait qui s'occupe des badges maintenant que gégé est parti ?"))
    assert decide(asked, facts=(badges, BAR)).item == badges
    cake = Known("f5", "gâteau nantais", "Le gâteau nantais de Tante Odile cuit 40 minutes")
    back = said(
        ("Élise", "j'ai mis le gâteau de tata odile au four"),
        ("Élise", "vous savez cb de temps faut le laisser ?"),
        ("Hugo", "pas la moindre idée"),
    )
    assert decide(back, facts=(cake, BAR)).item == cake
    # Said by someone else, the line before is not what the question refers to.
    other = [back[0], Spoken("Hugo", back[1].text), back[2]]
    assert decide(other, facts=(cake,)).action == "pass"


def test_a_death_announced_in_the_room_keeps_the_assistant_quiet() -> None:
    ehpad = Known("g7", "Ehpad des Tilleuls", "C'est quoi l'Ehpad des Tilleuls ?")
    grief = said(
        ("Nathalie", "papa nous a quittés cette nuit, à l'ehpad des tilleuls"),
        ("Olivier", "oh nathalie... je suis tellement désolé"),
    )
    assert decide(grief, goals=(ehpad,)).action == "pass"
