"""The reference judge's reading of a reply: question alternatives, negation, multi-entity answers (issue 16)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from emb_s_core import answer_match, judge
from emb_s_core.errors import EmbSError

OLDER = "Who is older, Annie Morton or Terry Richardson?"
HOTPOT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "hotpotqa-dev-distractor-500" / \
    "dev_subsampled.jsonl"


@pytest.mark.parametrize("question,alternatives", [
    (OLDER, ["Annie Morton", "Terry Richardson"]),
    ("who is younger Keith Bostic or Jerry Glanville ?", ["Keith Bostic", "Jerry Glanville"]),
    ("Which band, Letters to Cleo or Screaming Trees, had more members?", ["Letters to Cleo", "Screaming Trees"]),
    ("Which dog's ancestors include Gordon and Irish Setters: the Manchester Terrier or the Scotch Collie?",
     ["the Manchester Terrier", "the Scotch Collie"]),
    ("Is the Marsilea or the Brabejum the genus of more individual species of plants?",
     ["Marsilea", "the Brabejum"]),
    ("Did Franki Valli sing with Hellogoodbye or The Four Seasons?", ["Hellogoodbye", "The Four Seasons"]),
    ('Which came to market first, "Hey Pa! There\'s a Goat on the Roof" or "Poleconomy"',
     ["Hey Pa! There's a Goat on the Roof", "Poleconomy"]),
    ("Was Jamie Curry or Alyaksey Vasilewski born first?", ["Jamie Curry", "Alyaksey Vasilewski"]),
    ("Which case came first, Craig v. Boren or United States v. Paramount Pictures, Inc.?",
     ["Craig v. Boren", "United States v. Paramount Pictures"]),
    ("What color clothing do people wear during Oranjegekte or to celebrate Koningsdag?", []),  # not a choice
    ("What government position was held by the woman who portrayed Corliss Archer?", []),
    ("", []),
])
def test_question_alternatives(question, alternatives):
    assert answer_match.question_alternatives(question) == alternatives


def test_answer_side_and_competitors():
    alts = answer_match.alternatives_for("Who was born earlier, Emma Bull or Virginia Woolf?",
                                         ["Adeline Virginia Woolf"])
    assert alts.answer_side == ("Virginia Woolf",) and alts.competitors == ("Emma Bull",)
    # "battle of manila" shares "battle of" with the answer, but the contained side wins
    alts = answer_match.alternatives_for("Which battle occurred first, the Battle of Manila or the Battle of Guam?",
                                         ["Battle of Guam"])
    assert alts.answer_side == ("the Battle of Guam",)
    # the answer is neither side (a year): no usable alternatives, plain containment applies
    assert not answer_match.alternatives_for("Which case was decided first, Selle v. Gibb or Reynolds v. Sims?",
                                             ["1964"])
    yes = answer_match.alternatives_for("Were Scott Derrickson and Ed Wood of the same nationality?", ["yes"])
    assert yes.answer_side == ("yes",) and yes.competitors == ("no",)


@pytest.mark.parametrize("reply,phrase,asserted", [
    ("Terry Richardson", "Terry Richardson", True),
    ("It was not Terry Richardson", "Terry Richardson", False),
    ("Annie Morton, not Terry Richardson", "Annie Morton", True),  # the comma ends the negation's clause
    ("Annie Morton, not Terry Richardson", "Terry Richardson", False),
    ("Not Annie Morton but Terry Richardson", "Terry Richardson", True),
    ("Not Annie Morton but Terry Richardson", "Annie Morton", False),
    ("Terry Richardson is not the answer", "Terry Richardson", False),
    ("Terry Richardson isn't older", "Terry Richardson", False),
    ("Neither Annie Morton nor Terry Richardson", "Annie Morton", False),
    ("Neither Annie Morton nor Terry Richardson", "Terry Richardson", False),
    ("Terry Richardson rather than Annie Morton", "Annie Morton", False),
    ("not only Terry Richardson", "Terry Richardson", True),
    ("Terry Richardson is older than Annie Morton", "Annie Morton", False),  # "older" is the question's word
    ("Annie Morton is younger than Terry Richardson", "Terry Richardson", True),  # "younger" is not
    ("Richardson", "Terry Richardson", False),  # not a whole-phrase occurrence
])
def test_reply_asserts(reply, phrase, asserted):
    assert answer_match.Reply.parse(reply).asserts(phrase, answer_match.question_words(OLDER)) is asserted


def test_yes_no_words_count_only_at_a_clause_edge():
    assert answer_match.Reply.parse("No, they were not.").asserts("no", yes_no=True)
    assert answer_match.Reply.parse("The answer is yes").asserts("yes", yes_no=True)
    assert not answer_match.Reply.parse("There is no doubt they were").asserts("no", yes_no=True)


# --------------------------------------------------------------------------------------------- the judge's score
@pytest.mark.parametrize("reply,score", [
    # issue 16: every one of these scored 4 under containment alone
    ("Terry Richardson or Annie Morton", 1),
    ("Annie Morton and Terry Richardson", 1),
    ("Annie Morton, not Terry Richardson", 1),
    ("Terry Richardson is younger than Annie Morton", 1),  # the antonym puts Annie Morton first (issue 22)
    ("Terry Richardson is not older", 1),
    ("Neither Annie Morton nor Terry Richardson", 1),
    ("Annie Morton", 0),
    # right replies
    ("Terry Richardson", 5),
    ("terry richardson.", 5),
    ("Terry Richardson, not Annie Morton", 4),
    ("Terry Richardson is older than Annie Morton", 4),
    ("Not Annie Morton but Terry Richardson", 4),
    ("The older one is Terry Richardson.", 4),
    ("Richardson", 4),  # the surname, for a question asking for one person (issue 22)
    ("Annie Morton is younger than Terry Richardson", 4),  # both sides, the antonym: Terry Richardson is older
    ("Robert Richardson", 2),  # another person's name: token overlap only
])
def test_comparison_question(reply, score):
    assert judge.reference_score(reply, "Terry Richardson", [], question=OLDER)["score"] == score


@pytest.mark.parametrize("reply,answer,score", [
    ("Yes", "yes", 5),
    ("Yes, both are American.", "yes", 4),
    ("There is no doubt: yes", "yes", 4),
    ("No", "yes", 0),
    ("yes and no", "yes", 1),
    ("no and yes", "no", 1),
    ("Yes or no", "no", 1),
    ("I cannot say yes", "yes", 0),  # a refusal
    ("No, they were not.", "no", 4),
    ("Yes, they were not from the same country", "no", 0),
])
def test_yes_no_question(reply, answer, score):
    question = "Were Scott Derrickson and Ed Wood of the same nationality?"
    assert judge.reference_score(reply, answer, [], question=question)["score"] == score


@pytest.mark.parametrize("reply,score,reason", [
    ("Ralph Macchio and Pat Morita", 5, "exact"),
    ("Pat Morita and Ralph Macchio", 5, "entities"),  # the same entities in another order
    ("Pat Morita, Ralph Macchio", 5, "entities"),
    ("Both Pat Morita and Ralph Macchio starred in it", 4, "contained"),
    ("Pat Morita", 3, "f1"),  # one of two entities: partial
    ("Pat Morita, but not Ralph Macchio", 1, "negated"),
])
def test_multi_entity_answer(reply, score, reason):
    got = judge.reference_score(reply, "Ralph Macchio and Pat Morita", [], question="Who starred in The Karate Kid?")
    assert (got["score"], got["reason"]) == (score, reason)


def test_answer_side_of_the_question_is_credited():
    q = "Who was born earlier, Emma Bull or Virginia Woolf?"
    assert judge.reference_score("Virginia Woolf", "Adeline Virginia Woolf", [], question=q)["reason"] == "alternative"
    assert judge.reference_score("Virginia Woolf", "Adeline Virginia Woolf", [], question=q)["score"] == 4
    assert judge.reference_score("Emma Bull or Virginia Woolf", "Adeline Virginia Woolf", [], question=q)["score"] == 1


def test_found_on_held_out_replies():
    """Two wrong replies the held-out phrasings of bench_judge found credited (fixed since)."""
    q = "Which album was released first, Don'T Freak Me Out or Love & War (Barlowgirl Album)?"
    reply = "I think Love & War (Barlowgirl Album), but Don'T Freak Me Out is also possible."
    assert judge.reference_score(reply, "Don'T Freak Me Out", [], question=q)["score"] < 4  # a title is no denial
    q = "Which film was released later, He Knows You'Re Alone or The Twilight Saga: Breaking Dawn – Part 2?"
    reply = "The Twilight Saga: Breaking Dawn – Part 2 is incorrect; it is Mama'S Little Pirate."
    answer = "The Twilight Saga: Breaking Dawn – Part 2"
    assert judge.reference_score(reply, answer, [], question=q)["score"] < 4  # the dash is punctuation
    assert judge.reference_score(answer, answer, [], question=q)["score"] == 5


def test_negated_answer_outside_comparisons():
    q = "What government position was held by the woman who portrayed Corliss Archer?"
    assert judge.reference_score("She was Chief of Protocol", "Chief of Protocol", [], question=q)["score"] == 4
    assert judge.reference_score("It was not Chief of Protocol", "Chief of Protocol", [], question=q)["score"] == 1
    # without a question there is no rule to apply (issue 22: no silent fallback to an older rule)
    with pytest.raises(EmbSError):
        judge.reference_score("not Chief of Protocol", "Chief of Protocol")


@pytest.mark.skipif(not HOTPOT.is_file(), reason="shared HotpotQA data not present")
def test_twenty_real_hotpotqa_comparison_questions():
    """The issue's experiment: 20 HotpotQA comparison questions, 3 wrong replies each (both named either way, the
    wrong one asserted against the right one): all below 4; the right name alone scores 5."""
    cases = []
    for line in HOTPOT.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        answer = obj["answers_objects"][0]["spans"][0]
        alts = answer_match.alternatives_for(obj["question_text"], [answer])
        if alts and alts.answer_side[0] not in answer_match.YES_NO and answer_match.normalize(alts.answer_side[0]) == answer_match.normalize(answer):
            cases.append((obj["question_text"], answer, alts.competitors[0]))
        if len(cases) == 20:
            break
    assert len(cases) == 20
    wrong = right = 0
    for question, answer, other in cases:
        for reply in (f"{other} or {answer}", f"{answer} and {other}", f"{other}, not {answer}"):
            wrong += judge.reference_score(reply, answer, [], question=question)["score"] >= 4
        right += judge.reference_score(answer, answer, [], question=question)["score"] == 5
    assert (wrong, right) == (0, 20)


# v4: a named answer the reply does not stand behind is held back (score 3, not credited). Phrasings written for
# this test, none from the labelled sets: each class of doubt, and right replies with the same words used harmlessly.
CAPITAL = "What is the capital of the region where the Velkoria river rises?"


@pytest.mark.parametrize("reply,credited", [
    ("Tarnow, according to the documents.", True),
    ("That would be Tarnow.", True),
    ("I think it's Tarnow, if I read the second passage right.", True),
    ("Tarnow. The documents are brief, though.", True),
    ("**Tarnow** — the river rises in the hills north of it.", True),
    ("Many sources list Tarnow, yet the region's capital moved to Ostrel in 1994.", False),   # doubt word
    ("Tarnow is the popular answer, though it is an old mix-up with Ostrel.", False),          # doubt word
    ("The capital was Tarnow; since the 1994 reform it is now Ostrel.", False),                # turn, new name
    ("Tarnow held that role until it was replaced by Ostrel.", False),                         # turn, new name
    ("If the river rose in the west it would be Tarnow, but it rises in the east.", False),    # conditional
    ("Tarnow comes to mind first. Looking closer at the map, my answer is Ostrel.", False),    # commits elsewhere
    ("Either Tarnow or Ostrel, the documents do not make it clear which.", False),             # hedge
])
def test_doubt_holds_back_a_named_answer(reply, credited):
    got = judge.reference_score(reply, "Tarnow", [], question=CAPITAL)
    assert (got["score"] >= 4) == credited, got


@pytest.mark.parametrize("reply,credited", [
    ("There are 412 of them.", True),
    ("Four hundred and twelve.", True),
    ("Fewer than 412.", False),
    ("At least 412, possibly more.", False),
    ("Roughly 412.", True),  # an estimate states the number
    ("Almost 412.", False),
])
def test_a_bound_or_an_estimate_is_not_the_number(reply, credited):
    got = judge.reference_score(reply, "412", [], question="How many mills stood on the Velkoria in 1900?")
    assert (got["score"] >= 4) == credited, got


def test_a_conflicting_date_is_not_credited_through_a_year_alias():
    q = "When did the Velkoria bridge open?"
    assert judge.reference_score("It opened in 1931.", "March 1931", ["1931"], question=q)["score"] >= 4
    assert judge.reference_score("It opened in March 1931.", "March 1931", ["1931"], question=q)["score"] >= 4
    assert judge.reference_score("It opened in October 1931.", "March 1931", ["1931"], question=q)["score"] < 4


@pytest.mark.parametrize("reply", ["There is no way to tell from these passages.", "Impossible to say.",
                                   "I can't confirm that from the context.", "The passages give no clue."])
def test_refusals_in_other_words_never_match_no(reply):
    got = judge.reference_score(reply, "no", [], question="Did the Velkoria ever freeze over?")
    assert got["score"] == 0 and got["reason"] == "refusal", got


@pytest.mark.parametrize("reply,credited", [
    ("Harlow Bridge (1911) is more recent than Dunmore Bridge (1874).", True),      # comparative, side before it
    ("Harlow Bridge opened later, in 1911 — Dunmore Bridge dates from 1874.", True),
    ("Harlow Bridge — it opened in 1911, while Dunmore Bridge is much older.", True),  # the side it opens with
    ("Dunmore Bridge was built in 1874 and Harlow Bridge in 1911. So Harlow Bridge came later.", True),  # conclusion
    ("Dunmore Bridge (1874) is more recent than Harlow Bridge (1911).", False),
    ("Comparing the two: Dunmore Bridge is from 1874. Dunmore Bridge opened later than any other.", False),
    ("Harlow Bridge and Dunmore Bridge.", False),                                     # both as one list
    ("Probably Harlow Bridge, maybe Dunmore Bridge.", False),
])
def test_a_reply_naming_both_sides_is_read_for_the_side_it_picks(reply, credited):
    q = "Which bridge opened later, Dunmore Bridge or Harlow Bridge?"
    got = judge.reference_score(reply, "Harlow Bridge", [], question=q)
    assert (got["score"] >= 4) == credited, got


def test_other_names_the_question_allows():
    where = "Where was the painter of Quiet Harbour born?"
    assert judge.reference_score("She was born in Tarnow.", "Tarnow, Velkoria", [], question=where)["score"] >= 4
    assert judge.reference_score("Somewhere in Velkoria.", "Tarnow, Velkoria", [], question=where)["score"] < 4
    who = "Who did Mira exhibit with in 1931?"  # no place asked: "A, B" is a list of two
    assert judge.reference_score("Ola Simms.", "Ola Simms, Ian Murray", [], question=who)["score"] < 4
    nat = "What nationality is the director of Quiet Harbour?"
    assert judge.reference_score("He is Indian.", "India", [], question=nat)["score"] >= 4
    assert judge.reference_score("The United States.", "American", [], question=nat)["score"] >= 4
    assert judge.reference_score("He is Pakistani.", "India", [], question=nat)["score"] < 4
    job = "What career do both painters share?"
    assert judge.reference_score("Both worked as illustrators.", "illustrator", [], question=job)["score"] >= 4
    poss = "Who did Mira paint beside in 1931?"  # a name's possessive is no plural
    assert judge.reference_score("Ola Murray's brother, Ian.", "Ola Murray", [], question=poss)["score"] < 4
    assert judge.reference_score("Hawaii.", "Kingdom of Hawaiʻi", [], question=nat)["score"] >= 4 or \
        judge.reference_score("The Kingdom of Hawaii.", "Kingdom of Hawaiʻi", [], question=nat)["score"] >= 4
    van = "Who is older, Mart Van Duren or Ola Simms?"
    assert judge.reference_score("Van Duren.", "Mart Van Duren", [], question=van)["score"] >= 4


def test_company_a_member_keeps_is_no_extra_member():
    q = "Which saxophonist recorded Quiet Harbour?"
    assert judge.reference_score("Ola Simms, alongside Ian Murray and Ben Tor.", "Ola Simms", [], question=q)[
        "score"] >= 4
    assert judge.reference_score("Ola Simms, Ian Murray and Ben Tor.", "Ola Simms", [], question=q)["score"] < 4


@pytest.mark.parametrize("question,gold,reply,credited", [
    # free-form golds in other words, and what must still fail
    ("Where does Ola volunteer on Sundays?", "Volunteering at a soup kitchen", "She volunteers at a soup kitchen.", True),
    ("Where does Ola volunteer on Sundays?", "Volunteering at a soup kitchen", "She volunteers at an animal shelter.",
     False),
    ("Where does Ola volunteer on Sundays?", "Volunteering at a soup kitchen", "She never volunteered at a soup kitchen.",
     False),
    # lists: every member, and nothing besides
    ("Which rivers did Ola paddle?", "Velkoria, Tarn", "- Velkoria\n- Tarn", True),
    ("Which rivers did Ola paddle?", "Velkoria, Tarn", "- Velkoria\n- Tarn\n- Ostrel", False),
    ("Which rivers did Ola paddle?", "Velkoria, Tarn", "Ola paddled the Velkoria, the Tarn and the Ostrel.", False),
    # another claim first, the answer as an aside, the past, or later
    ("What car does Ola drive?", "Skoda", "A Volvo estate, though she also likes the Skoda.", False),
    ("What car does Ola drive?", "Skoda", "She used to drive a Skoda, but now she has a Volvo estate.", False),
    ("What car does Ola drive?", "Skoda", "She drives a Skoda Octavia.", True),
    ("What is Ola learning?", "cello", "Ola was learning the flute then; the cello came later.", False),
    # possessives: the name itself, or a modifier of another person
    ("Which film was shot first, Quiet Harbour or Grey Dunes?", "Quiet Harbour",
     "Quiet Harbour's shoot came first, two years before Grey Dunes.", True),
    ("Who directed Quiet Harbour?", "Ola Simms", "Ola Simms's assistant, Ian Tor.", False),
])
def test_round_two_classes(question, gold, reply, credited):
    got = judge.reference_score(reply, gold, [], question=question)
    assert (got["score"] >= 4) == credited, got


# v5, read on blind round 3: (question, gold, aliases, reply, credited)
V5_CASES = [
    # other forms of the same answer (v5)
    ("When did Ola start the choir?", "The Thursday before 14 March 2024", [], "On Thursday, 7 March 2024.", True),
    ("When did Ola start the choir?", "The Thursday before 14 March 2024", [], "On 8 March 2024.", False),
    ("When did Ola go hiking?", "The weekend before 14 March 2024", [], "Sunday 10 March 2024.", True),
    ("When did Ola visit Tarn?", "In 2019", [], "Ola visited Tarn in 2019.", True),
    ("When did the strike happen?", "began 3 May 1931", [], "It started on May 3, 1931.", True),
    ("Which phone does Ola use?", "A Fairphone; since she repairs her own devices", [], "A Fairphone.", True),
    ("Which race did Ola win?", "Grand Prix of 1931", [], "She won the 1931 Grand Prix.", True),
    ("Who painted Grey Dunes?", "Ola Maren Simms", [], "Ola Simms painted it.", True),
    ("Who played the sheriff?", "Sheriff Ian Tor", [], "He played Ian Tor.", True),
    ("How long was the walk?", "Three hours", [], "About 3 hrs.", True),
    ("How many branches does the bank have?", "more than 40 branches", [], "Over forty branches.", True),
    ("When did Ola chair the board?", "1969 until 1974", [], "She chaired it 1969–74.", True),
    ("When did Ola chair the board?", "1969 until 1974", [], "She chaired it 1969–78.", False),
    ("When did Ola start at the mill?", "April.2023", [], "In April 2023.", True),
    ("What century is the chapel from?", "16th - century", [], "It dates from the 16th century.", True),
    ("Is Ola likely to move to Tarn?", "Likely no", [], "Probably not; her job keeps her in Velkoria.", True),
    ("Is Ola likely to move to Tarn?", "Likely no", [], "Most likely yes, she has family there.", False),
    ("Do Quiet Harbour and Grey Dunes belong to different genres?", "no", [], "They are the same genre: both are "
     "westerns.", True),
    ("Are Ola Simms and Ian Tor both painters?", "yes", [], "Ola Simms is a painter, but Ian Tor is a sculptor.", False),
    ("Are Ola Simms and Ian Tor from the same country?", "no", [], "They are not from different countries.", False),
    # lists: asides and descriptions are no members, a list may start after "with"
    ("Who founded Tarn Mills?", "Ian Tor", [], "**Ian Tor**, Ola Simms's elder son, a mill engineer.", True),
    ("Who directed Grey Dunes?", "Ola Simms and Ian Tor", [], "Ola Simms and Ian Tor (the film is a remake, "
     "starring Ben Rolf).", True),
    ("Which guitarist toured with Ola?", "Ian Tor", [], "The Tarn Five, with Ian Tor and Ben Rolf on guitar.", False),
    ("What pets does Ola have?", "hamster", [], "A hamster and a cat.", False),
    # a comparison concluded mid-sentence
    ("Which band has more members, Grey Dunes or Tarn?", "Tarn", [], "Grey Dunes is a duo while Tarn has five "
     "members, so Tarn.", True),
    # what the reply does not stand behind
    ("Where did Ola think the comet was in relation to the moon?", "below the Moon", ["Moon"], "Above the Moon.",
     False),
    ("Which party did Ola join?", "Velkorian Labour Party", [], "The Green Party.", False),
    ("Who won the 1931 race?", "Ian Tor", [], "Ben Rolf, Ian Tor's teammate, won it.", False),
    ("Who founded Tarn Mills?", "Ian Tor", [], "It was Ben Tor, son of the engineer Ian Tor.", False),
    ("Which meat does Ola prefer?", "lamb", [], "Ola prefers pork over lamb.", False),
    ("Which meat does Ola prefer?", "lamb", [], "Ola likes pork more than lamb.", False),
    ("Where was Ola born?", "Velkoria", [], "Velkoria? The passage isn't specific enough to confirm.", False),
    ("Who chaired the board in 1974?", "Ian Tor", [], "Ola Simms chaired it until 1974, before Ian Tor took over. "
     "So Ola Simms.", False),
    ("Where was Ola born?", "Tarn", [], "She was born in Velkoria and later moved to Tarn.", False),
    ("Where does Ola live now?", "Tarn", [], "She was born in Velkoria and later moved to Tarn.", True),
]


# v6, read on blind round 4: (question, gold, aliases, reply, credited)
V6_CASES = [
    # comparisons concluded with "Answer:" or a surname, a doubt word in the title
    ("Who died later, Ola Simms or Ian Tor?", "Ola Simms", [], "Tor died in 1899 and Simms in 1902. So Simms died "
     "later.", True),
    ("Which genus has more species, the Velkoria or the Tarnia?", "Tarnia", [], "Velkoria has one species, whereas "
     "Tarnia has about 40. Answer: Tarnia.", True),
    ("Which film came out first, No Wrong Turns or Grey Dunes?", "No Wrong Turns", [], "No Wrong Turns (1961) came "
     "out before Grey Dunes (1970), so No Wrong Turns.", True),
    # other forms: short given names, company suffixes, a people's plural, a nationality gold, decades, "a month"
    ("Which governor did Ola advise?", "William Henry Tor", [], "She advised Governor Bill Tor.", True),
    ("Which firm bought the mill?", "Velkor Holdings, Inc.", [], "Velkor Holdings bought it in 1999.", True),
    ("Which people traded with the fort?", "Tarnians", [], "The Tarnian people, mostly.", True),
    ("What is the birthplace of the director of Grey Dunes?", "Italian", [], "He was born in Italy.", True),
    ("When did the band rise to fame?", "early 1970s", [], "In the early '70s.", True),
    ("What is the upper age of the readership?", "early 20s", [], "Readers into their early twenties.", True),
    ("How long was the gap between the two moves?", "one month", [], "About a month.", True),
    ("When did Ola get her tattoo?", "A few years ago", [], "A few years back.", True),
    ("When did Ola visit Tarn?", "June 2023", [], "In mid-June 2023.", True),
    ("When did Ola start the job?", "The week before 27 March 2023", [], "Around 22 March 2023.", True),
    ("When did Ola start the job?", "The week before 27 March 2023", [], "On 2 March 2023.", False),
    ("When did Ola go climbing?", "11 June 2023", [], "The chat is dated 13 June 2023, and she went the Sunday "
     "before, 11 June 2023.", True),
    ("Did Ola own a car in 2019?", "Presumably not", [], "No, she only bought one in 2021.", True),
    # lists: an item that says when or how is no member
    ("What does the firm sell?", "boats and engines", [], "Boats and engines, mainly to fishing co-operatives.", True),
    ("Who is the heir of Lord Tor?", "Ian Tor", [], "Ian Tor, his elder son and envoy.", True),
    ("Who is the heir of Lord Tor?", "Ian Tor", [], "Ian Tor and Ben Rolf, his elder son.", False),
    # a name after its title words, a reply that ends by concluding with the answer, an alias "Name, title"
    ("Whom does Ola play in the film?", "Queen dowager Mira Tor", [], "She plays Queen Mira Tor of Velkoria.", True),
    ("What is the birthplace of the director?", "Italian", [], "He was born in Italy (he later moved to Tarn). So "
     "his place of birth is Italy.", True),
    ("Who is the child of Lord Tor?", "Ian Tor", ["Ian Tor, 2nd Baron Tor"], "Ian Tor, later 2nd Baron Tor.", True),
    ("Who died later, Ola Simms or Ian Tor?", "Ola Simms", [], "Ola Simms died in 1902, after Ian Tor (1899). So "
     "Simms died later.", True),
    # v7: a sentence-long gold retold with a quarter of its words in other words
    ("Why did Ola open the bakery?", "She lost her office job and decided to turn her love of baking into her own "
     "small business.", [], "After losing the office job she turned her love of baking into a small business of "
     "her own.", True),
    ("Why did Ola open the bakery?", "She lost her office job and decided to turn her love of baking into her own "
     "small business.", [], "She wanted to be near her family in Tarn.", False),
    # a possessive before the answer is an owner, not a first name
    ("In which film does the actor appear?", "The Grey Dunes", ["Grey Dunes"], "In Ola Simms's Grey Dunes.", True),
]


# v8, read on blind round 5: (question, gold, aliases, reply, credited)
V8_CASES = [
    ("What did Ola plan for the evening?", "have dinner with friends from the choir", [], "Dinner with some friends "
     "from the choir.", True),
    ("Why does Ola avoid bread?", "gluten intolerance", [], "Because she is gluten intolerant.", True),
    ("What does Ola collect?", "stamps, film DVDs, postcards", [], "Postcards, stamps and films on DVD.", True),
    ("What do Ola and Ian both do for a living?", "teacher and translator", [], "Both work as teachers and "
     "translators. (Ian also writes, but Ola does not.)", True),
    ("What did Ola and her father do in the shed?", "fixing bikes and painting furniture", [], "They spent hours "
     "fixing/painting: fixing bikes and painting old furniture.", True),
    ("Who is the father of Ian Tor?", "Ben Rolf Tor", [], "Ian Tor was a son of Ben Rolf Tor and Mira Simms.", True),
    ("Who founded the firm?", "Ben Rolf Tor", [], "It was Ian Tor, son of Ben Rolf Tor.", False),
    ("Which club did Ola play for last?", "Tarn Rovers Football Club", [], "Tarn Rovers.", True),
    ("Who was the father of the Speaker?", "Sir Ian Tor, 1st Baronet", [], "Sir Ian Tor, the founder of the mill.", True),
    ("Who was the father of the Speaker?", "Sir Ian Tor, 1st Baronet", [], "Sir Ian Tor, 2nd Baronet.", False),
    ("Who was the father of the Speaker?", "Sir Ian Tor, 1st Baronet", [], "The 3rd Baronet's father was Sir Ian Tor, "
     "2nd Baronet, whose father was Sir Ian Tor, 1st Baronet.", True),
    ("Who is married to the actress?", "Adrian Tor", [], "She is married to Ade Tor.", True),
    ("When was the company founded?", "1599", [], "It was set up in 1599, though the charter came in 1600. I'll say "
     "1600.", False),
    ("In what century did the bishop live?", "18th century", [], "He lived in the 1700s.", True),
]


# v9, read on blind round 6: (question, gold, aliases, reply, credited)
V9_CASES = [
    ("How many times did Ola swim in May?", "3", [], "Thrice.", True),
    ("How many times did Ola swim in May?", "Twice.", [], "two times", True),
    ("How long did Ola keep the shop?", "20 years", [], "Two decades.", True),
    ("Where might Ola move next year?", "Tarn or Velkoria", [], "Either Tarn or Velkoria, she has family in both.",
     True),
    ("Which was the club's first ground?", "Mill Lane", [], "Mill Lane was their first ground; they later moved to "
     "Tarn Park.", True),
    ("Which club did Ola play for?", "Rovers", [], "She played for Rovers (today's Tarn Rovers), a local side.", True),
    ("When was Ola crowned?", "1216", [], "She was crowned in 1216 and again in 1220, the proper ceremony, so 1220.",
     False),
    ("Which film came out later, Grey Dunes or Tarn?", "Grey Dunes", [], "I'd lean toward Grey Dunes, though Tarn "
     "could also be the newer one.", False),
    ("Which city did Ola suggest?", "Tarn, Velkoria", [], "Tarn, Velkoria, or Ostrel; she wasn't sure which.", False),
    # lists: each member, with a quarter of the words in other words; none missing
    ("What does the charity run?", "toy drive, community food drive, veterans' run", [], "A toy drive, a food drive "
     "for the community and a run for veterans.", True),
    ("What does the charity run?", "toy drive, community food drive, veterans' run", [], "A toy drive and a "
     "community food drive.", False),
    ("What did Ola and Ian play?", "boardgames, charades", [], "Board games and charades.", True),
]


# v10, read on blind round 7: (question, gold, aliases, reply, credited)
V10_CASES = [
    ("Who was born first, Ola Maren Simms or Ian Tor?", "Ola Maren Simms", [], "Simms (b. 4 May 1901) was born "
     "before Ian Tor (b. 1920).", True),
    ("When did the first Lord Tor die?", "25 December 1701", [], "He died on Christmas Day, 1701.", True),
    ("What was the most goals Ola scored in a match?", "4 goals", [], "4", True),
    ("What was the most goals Ola scored in a match?", "4 goals", [], "4 assists", False),
    ("What dish does Ola recommend in Tarn?", "dumplings", [], "Dumplings: the ones in Velkoria were good but "
     "Tarn's are better.", True),
    ("Are Grey Dunes and Tarn both westerns?", "no", [], "Both are 1950s films, but only Grey Dunes is a western.",
     True),
    ("Which band has more members, Grey Dunes or Tarn?", "Tarn", [], "Grey Dunes had three members, while Tarn lists "
     "five. Tarn has more.", True),
    ("Which actor guest-starred as a singer?", "Ola Simms", [], "The guests were Ian Tor and Ola Simms. The singer "
     "among them is Ian Tor.", False),
]


@pytest.mark.parametrize("question,gold,aliases,reply,credited", V5_CASES + V6_CASES + V8_CASES + V9_CASES + V10_CASES)
def test_classes_read_on_the_blind_rounds(question, gold, aliases, reply, credited):
    """Phrasings of our own, one class each, for what each rule version learned from a round it read."""
    got = judge.reference_score(reply, gold, aliases, question=question)
    assert (got["score"] >= 4) == credited, got


# v11, the surface forms issue 34 lists as classes (fictional names): (question, gold, aliases, reply, credited)
V11_CASES = [
    ("What was Tarn's median household income?", "$41,207", [], "US$41,207", True),  # a country's prefix
    ("What was Tarn's median household income?", "$41,207", [], "It was US$41,207.", True),
    ("What was the film's budget?", "A$3 million", [], "About 3 million dollars.", True),  # a sign with a scale word
    ("What was Tarn's median household income?", "$41,207", [], "US$41,270", False),
    ("Who chairs the Tarn Bank?", "Ola Simms", [], "Ola T. Simms", True),  # a middle initial the gold lacks
    ("Who chairs the Tarn Bank?", "Ola Simms", [], "The chair is Ola T. Simms.", True),
    ("Who chairs the Tarn Bank?", "Ola R. Simms", [], "Ola T. Simms", False),  # the gold's own initial is read
    ("Which novel did Ola Simms write?", "Harbour-Five", [], "Harbour 5", True),  # number word joined to a title
    ("Which novel did Ola Simms write?", "Harbour 5", [], "It is Harbour-Five.", True),
    ("Which novel did Ola Simms write?", "Harbour-Five", [], "Harbour 6", False),
    ("Who wrote the Tarn ballads?", "Ian Maren Tor", [], "I. M. Tor wrote them.", True),  # given names as initials
    ("Who wrote the Tarn ballads?", "Ian Maren Tor", [], "I. K. Tor wrote them.", False),
    ("Which magazine was started first, Ola's Magazine or First for Tarn?", "Ola's Magazine", [],
     "Ola's was started first.", True),  # a side without its generic word
    ("Which magazine was started first, Ola's Magazine or First for Tarn?", "Ola's Magazine", [],
     "First for Tarn was started first.", False),
]


@pytest.mark.parametrize("question,gold,aliases,reply,credited", V11_CASES)
def test_surface_forms_read_as_classes(question, gold, aliases, reply, credited):
    got = judge.reference_score(reply, gold, aliases, question=question)
    assert (got["score"] >= 4) == credited, got
