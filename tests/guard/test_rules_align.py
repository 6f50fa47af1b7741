"""The verifier's alignment families (issue 36), each ≥ 10 look-alike pairs per language that
must not be served, and paraphrases of the same shape that must still pass the check:
numbers in words, ordinals, initials, a direction reversed, comparatives and other opposites
(eko/guard/rules_align.py, eko/guard/rules_words.py)."""

from __future__ import annotations

import pytest

from eko.guard.check import false_hit_check
from eko.guard.rules_align import initials, spelled_numbers, symbols_differ
from tests.guard.pair_checks import served_either_way

NUMBERS_WORDS_EN = [
    ("How do I feed 3 cats?", "How do I feed four cats?"),
    ("Is it safe to sleep six hours a night?", "Is it safe to sleep 8 hours a night?"),
    ("What can I cook in twenty minutes?", "What can I cook in 30 minutes?"),
    ("What is two plus two?", "What is 3 plus 3?"),
    ("How do I split a bill between five people?", "How do I split a bill between 4 people?"),
    ("Which car fits seven people?", "Which car fits 5 people?"),
    ("How to learn French in three months?", "How to learn French in 6 months?"),
    (
        "What happened in the twelve days of Christmas?",
        "What happened in the 10 days of Christmas?",
    ),
    ("How to run twenty five km?", "How to run 21 km?"),
    ("What to do with two hundred dollars?", "What to do with 500 dollars?"),
    ("Best gift for a ten year old boy?", "Best gift for a 12 year old boy?"),
]
NUMBERS_WORDS_FR = [
    ("Comment nourrir 3 chats ?", "Comment nourrir quatre chats ?"),
    ("Est-ce grave de dormir six heures par nuit ?", "Est-ce grave de dormir 8 heures par nuit ?"),
    ("Que cuisiner en vingt minutes ?", "Que cuisiner en 30 minutes ?"),
    ("Combien font deux plus deux ?", "Combien font 3 plus 3 ?"),
    (
        "Comment partager une addition entre cinq personnes ?",
        "Comment partager une addition entre 4 personnes ?",
    ),
    ("Quelle voiture pour sept personnes ?", "Quelle voiture pour 5 personnes ?"),
    ("Comment apprendre l'anglais en trois mois ?", "Comment apprendre l'anglais en 6 mois ?"),
    ("Que faire avec deux cents euros ?", "Que faire avec 500 euros ?"),
    ("Quel cadeau pour un garçon de dix ans ?", "Quel cadeau pour un garçon de 12 ans ?"),
    ("Comment courir vingt-cinq km ?", "Comment courir 21 km ?"),
    ("Peut-on manger quinze œufs par semaine ?", "Peut-on manger 12 œufs par semaine ?"),
]
ORDINALS_EN = [
    ("Who was the first president of the USA?", "Who was the second president of the USA?"),
    ("What happened in the 3rd century?", "What happened in the fourth century?"),
    ("Who won the second world war?", "Who won the 1st world war?"),
    ("What is the third law of Newton?", "What is the second law of Newton?"),
    ("When does the fifth season come out?", "When does the sixth season come out?"),
    ("Who was the first man on the moon?", "Who was the 2nd man on the moon?"),
    ("What is the tenth planet?", "What is the ninth planet?"),
    ("What is the 4th dimension?", "What is the fifth dimension?"),
    ("What is the first amendment?", "What is the second amendment?"),
    ("What was the 7th wonder of the world?", "What was the eighth wonder of the world?"),
]
ORDINALS_FR = [
    (
        "Qui était le premier président de la République ?",
        "Qui était le deuxième président de la République ?",
    ),
    ("Que s'est-il passé au 3e siècle ?", "Que s'est-il passé au quatrième siècle ?"),
    ("Qui a gagné la seconde guerre mondiale ?", "Qui a gagné la 1re guerre mondiale ?"),
    ("Quelle est la troisième loi de Newton ?", "Quelle est la deuxième loi de Newton ?"),
    ("Quand sort la cinquième saison ?", "Quand sort la sixième saison ?"),
    ("Qui est le premier homme sur la Lune ?", "Qui est le 2e homme sur la Lune ?"),
    (
        "Que dit le premier article de la Constitution ?",
        "Que dit le deuxième article de la Constitution ?",
    ),
    ("Qu'est-ce que la 4e dimension ?", "Qu'est-ce que la cinquième dimension ?"),
    ("Quelle est la septième merveille du monde ?", "Quelle est la huitième merveille du monde ?"),
    (
        "Quel est le dixième arrondissement de Paris ?",
        "Quel est le neuvième arrondissement de Paris ?",
    ),
]
INITIALS_EN = [
    ("Who is J. K. Rowling?", "Who is J. R. R. Tolkien?"),
    ("What did M. K. Gandhi write?", "What did M. S. Gandhi write?"),
    ("Is A. R. Rahman married?", "Is A. P. Rahman married?"),
    ("How old is J.K. Simmons?", "How old is O.J. Simmons?"),
    ("Where was T. S. Eliot born?", "Where was G. S. Eliot born?"),
    ("What are the books of C. S. Lewis?", "What are the books of C. D. Lewis?"),
    ("Who killed J. F. Kennedy?", "Who killed R. F. Kennedy?"),
    ("What is H. G. Wells famous for?", "What is H. R. Wells famous for?"),
    ("When did E. E. Cummings die?", "When did E. A. Cummings die?"),
    ("Is W. B. Yeats Irish?", "Is J. B. Yeats Irish?"),
]
INITIALS_FR = [
    ("Qui est J. K. Rowling ?", "Qui est J. R. R. Tolkien ?"),
    ("Qu'a écrit M. K. Gandhi ?", "Qu'a écrit M. S. Gandhi ?"),
    ("A. R. Rahman est-il marié ?", "A. P. Rahman est-il marié ?"),
    ("Quel âge a J.K. Simmons ?", "Quel âge a O.J. Simmons ?"),
    ("Où est né T. S. Eliot ?", "Où est né G. S. Eliot ?"),
    ("Quels sont les livres de C. S. Lewis ?", "Quels sont les livres de C. D. Lewis ?"),
    ("Qui a tué J. F. Kennedy ?", "Qui a tué R. F. Kennedy ?"),
    ("Pourquoi H. G. Wells est-il connu ?", "Pourquoi H. R. Wells est-il connu ?"),
    ("Quand est mort E. E. Cummings ?", "Quand est mort E. A. Cummings ?"),
    ("W. B. Yeats est-il irlandais ?", "J. B. Yeats est-il irlandais ?"),
]
DIRECTION_EN = [
    ("How do I convert Celsius to Fahrenheit?", "How do I convert Fahrenheit to Celsius?"),
    ("How to convert pounds to kilograms?", "How to convert kilograms to pounds?"),
    ("Is India bigger than China?", "Is China bigger than India?"),
    (
        "How long is the flight from Paris to London?",
        "How long is the flight from London to Paris?",
    ),
    ("How to convert a pdf to word?", "How to convert a word to pdf?"),
    ("Is tea healthier than coffee?", "Is coffee healthier than tea?"),
    (
        "How do I move photos from iphone to android?",
        "How do I move photos from android to iphone?",
    ),
    (
        "What is the exchange rate of dollars to euros?",
        "What is the exchange rate of euros to dollars?",
    ),
    ("Why is gold more expensive than silver?", "Why is silver more expensive than gold?"),
    ("How do I translate English into Spanish?", "How do I translate Spanish into English?"),
    ("Did Rome come before Greece?", "Did Greece come before Rome?"),
]
DIRECTION_FR = [
    ("Comment convertir des euros en dollars ?", "Comment convertir des dollars en euros ?"),
    (
        "Comment convertir des degrés Celsius en Fahrenheit ?",
        "Comment convertir des degrés Fahrenheit en Celsius ?",
    ),
    (
        "La France est-elle plus grande que l'Allemagne ?",
        "L'Allemagne est-elle plus grande que la France ?",
    ),
    ("Combien de temps de Paris à Lyon en train ?", "Combien de temps de Lyon à Paris en train ?"),
    ("Le vin est-il plus sain que la bière ?", "La bière est-elle plus saine que le vin ?"),
    (
        "Comment traduire du français vers l'anglais ?",
        "Comment traduire de l'anglais vers le français ?",
    ),
    (
        "Pourquoi l'or est-il plus cher que l'argent ?",
        "Pourquoi l'argent est-il plus cher que l'or ?",
    ),
    (
        "Comment transférer des photos de l'iphone vers android ?",
        "Comment transférer des photos d'android vers l'iphone ?",
    ),
    ("Comment passer un pdf en word ?", "Comment passer un word en pdf ?"),
    ("Quelle distance de Marseille à Nice ?", "Quelle distance de Nice à Marseille ?"),
    (
        "Le chat est-il plus intelligent que le chien ?",
        "Le chien est-il plus intelligent que le chat ?",
    ),
]
OPPOSITES_EN = [
    ("How do I eat more protein?", "How do I eat less protein?"),
    ("What time does the sun rise in Paris?", "What time does the sun set in Paris?"),
    ("Which team won the final?", "Which team lost the final?"),
    ("What is the highest mountain in Europe?", "What is the lowest mountain in Europe?"),
    ("Who is the oldest player in the NBA?", "Who is the youngest player in the NBA?"),
    ("Why do I push the door?", "Why do I pull the door?"),
    ("How do I start a car?", "How do I end a car?"),
    ("What is the largest ocean?", "What is the smallest ocean?"),
    ("Where is the north pole?", "Where is the south pole?"),
    ("Who is the tallest man alive?", "Who is the shortest man alive?"),
    ("How to get more followers?", "How to get fewer followers?"),
]
OPPOSITES_FR = [
    ("Comment manger plus de protéines ?", "Comment manger moins de protéines ?"),
    ("À quelle heure se lève le soleil à Paris ?", "À quelle heure se couche le soleil à Paris ?"),
    ("Quelle équipe a gagné la finale ?", "Quelle équipe a perdu la finale ?"),
    ("Quelle est la plus grande ville du monde ?", "Quelle est la plus petite ville du monde ?"),
    ("Qui est le joueur le plus jeune de la NBA ?", "Qui est le joueur le plus vieux de la NBA ?"),
    ("Faut-il pousser ou la porte ?", "Faut-il tirer la porte ?"),
    ("Quand commence l'été ?", "Quand finit l'été ?"),
    ("Où se trouve le pôle nord ?", "Où se trouve le pôle sud ?"),
    (
        "Pourquoi le prix de l'essence est en hausse ?",
        "Pourquoi le prix de l'essence est en baisse ?",
    ),
    ("Quel est le plus grand océan ?", "Quel est le plus petit océan ?"),
    ("Comment avoir plus d'abonnés ?", "Comment avoir moins d'abonnés ?"),
]
UNITS_BARE_EN = [
    ("How do I convert cups to grams?", "How do I convert cups to ounces?"),
    ("What is the price of gold per gram?", "What is the price of gold per kilogram?"),
    ("How many calories do I burn per mile?", "How many calories do I burn per kilometer?"),
    ("How many books do you read in a week?", "How many books do you read in a month?"),
    ("How much does a liter of milk cost?", "How much does a gallon of milk cost?"),
    ("How much is petrol per liter in India?", "How much is petrol per gallon in India?"),
    ("How many dollars is a bitcoin?", "How many rupees is a bitcoin?"),
    ("What is my height in feet?", "What is my height in meters?"),
    ("How do I lose weight in a week?", "How do I lose weight in a year?"),
    ("What is the speed of light in miles?", "What is the speed of light in kilometers?"),
]
UNITS_BARE_FR = [
    ("Combien de grammes dans une tasse ?", "Combien de kilos dans une tasse ?"),
    ("Quel est le prix de l'or au gramme ?", "Quel est le prix de l'or au kilo ?"),
    ("Combien de calories par kilomètre de course ?", "Combien de calories par mile de course ?"),
    ("Combien de livres lisez-vous par semaine ?", "Combien de livres lisez-vous par mois ?"),
    ("Combien coûte un litre de lait ?", "Combien coûte un kilo de lait ?"),
    ("Quel est le prix de l'essence par litre ?", "Quel est le prix de l'essence par gallon ?"),
    ("Combien d'euros vaut un bitcoin ?", "Combien de dollars vaut un bitcoin ?"),
    ("Quelle est ma taille en pieds ?", "Quelle est ma taille en mètres ?"),
    ("Comment perdre du poids en une semaine ?", "Comment perdre du poids en un mois ?"),
    (
        "Quelle est la vitesse de la lumière en kilomètres par heure ?",
        "Quelle est la vitesse de la lumière en miles par heure ?",
    ),
]
FAMILIES = {
    "numbers in words, en": NUMBERS_WORDS_EN,
    "numbers in words, fr": NUMBERS_WORDS_FR,
    "ordinals, en": ORDINALS_EN,
    "ordinals, fr": ORDINALS_FR,
    "initials, en": INITIALS_EN,
    "initials, fr": INITIALS_FR,
    "direction, en": DIRECTION_EN,
    "direction, fr": DIRECTION_FR,
    "opposites, en": OPPOSITES_EN,
    "opposites, fr": OPPOSITES_FR,
    "units without a number, en": UNITS_BARE_EN,
    "units without a number, fr": UNITS_BARE_FR,
}
# Same question, other words: every rule above must let them through.
PARAPHRASES = [
    ("How do I feed 3 cats?", "How should I feed three cats?"),
    ("Comment nourrir 3 chats ?", "Comment bien nourrir trois chats ?"),
    ("Who was the 1st president of the USA?", "Who was the first president of the USA?"),
    (
        "Qui était le 1er président de la République ?",
        "Qui fut le premier président de la République ?",
    ),
    ("Who is J. K. Rowling?", "Who is J.K. Rowling exactly?"),
    ("Qui est J. K. Rowling ?", "Qui est Rowling ?"),
    ("How do I convert Celsius to Fahrenheit?", "How can I convert Celsius to Fahrenheit quickly?"),
    ("Comment convertir des euros en dollars ?", "Comment changer mes euros en dollars ?"),
    (
        "How long is the flight from Paris to London?",
        "How long is the flight to London from Paris?",
    ),
    (
        "What is the best way to learn Python to get a job?",
        "What is the best way to get a job by learning Python?",
    ),
    ("Is India bigger than China?", "Is India larger than China?"),
    (
        "La France est-elle plus grande que l'Allemagne ?",
        "La France est-elle plus vaste que l'Allemagne ?",
    ),
    ("How do I eat more protein?", "How can I eat more proteins?"),
    ("Comment manger plus de protéines ?", "Comment consommer plus de protéines ?"),
    ("What time does the sun rise in Paris?", "When does the sun rise in Paris?"),
    ("How do I convert cups to grams?", "How can I convert cups into grams?"),
    ("Quel est le prix de l'or au gramme ?", "Combien coûte l'or au gramme ?"),
]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_has_ten_pairs_none_served(family: str) -> None:
    pairs = FAMILIES[family]
    assert len(pairs) >= 10
    assert served_either_way(pairs) == []


@pytest.mark.parametrize(("question", "stored"), PARAPHRASES)
def test_paraphrases_of_the_same_shape_pass(question: str, stored: str) -> None:
    result = false_hit_check(question, stored)
    assert result.passed, result.details


def test_numbers_in_words_read_as_digits() -> None:
    assert spelled_numbers("twenty five cats and three dogs") == {"25", "3"}
    assert spelled_numbers("vingt-cinq chats, deux cents euros") == {"25", "200"}
    assert spelled_numbers("the 3rd and the first, la 2e, le 1er") == {"3", "1", "2"}
    assert spelled_numbers("which one is new, un neuf ?") == frozenset()
    # "first" / "second" without a determiner are adverbs or time, not ordinals.
    assert spelled_numbers("Which movie would you watch first?") == frozenset()


def test_initials_in_order() -> None:
    assert initials("J. K. Rowling and J.R.R. Tolkien") == ("J", "K", "J", "R", "R")
    assert initials("How do I learn Python?") == ()
    # Not a person's initials: a country, a degree.
    assert initials("Could the U.S. take over the world?") == ()
    assert initials("Can I study for a B.E or a B.Tech in Germany?") == ()


@pytest.mark.parametrize(
    ("question", "stored", "expected"),
    [
        ("How do I debug C++ code?", "How do I debug C code?", (["c++"], ["c"])),
        ("Is C# slower than Go?", "Is C++ slower than Go?", (["c#"], ["c++"])),
        ("How do I update Notepad++?", "How do I update Notepad?", (["notepad++"], ["notepad"])),
        ("Comment déboguer du C ?", "Comment déboguer du C# ?", (["c"], ["c#"])),
    ],
)
def test_a_name_closed_by_another_symbol_is_another_name(
    question: str, stored: str, expected: tuple[list[str], list[str]]
) -> None:
    assert symbols_differ(question, stored) == expected
    result = false_hit_check(question, stored)
    assert "names" in result.failed


@pytest.mark.parametrize(
    ("question", "stored"),
    [
        ("How do I debug C++ code?", "What is the best way to debug C++ code?"),
        ("How do I get an A+ in a physics class?", "How do I get A+ in physics class?"),
        ("C'est quoi un pointeur en C ?", "Que sont les pointeurs en C ?"),
        # A plus after a common word means "more than".
        ("How do I turn a million into a billion+?", "How do I turn a million into a billion?"),
    ],
)
def test_the_same_symbol_or_none_passes(question: str, stored: str) -> None:
    assert symbols_differ(question, stored) is None
