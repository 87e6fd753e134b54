"""Word lists and sentence templates of the demo bank (data only; the generator is ``synthetic.py``).

Why so much text: a bank written from one sentence pattern is trivially separable by any retriever. Each domain has
its own vocabulary (fields, groups, nouns, adjectives, verbs), its own event type with two numeric attributes and a
person role, and several phrasings for every fact and question; shared essay templates and discourse connectives
mix that vocabulary into topical prose. Placeholders in templates:

``{S}`` subject name, ``{Y}`` year, ``{P}`` place, ``{V}`` value, ``{E}`` event noun, ``{R}`` role, ``{N}`` person,
``{O}`` organisation; lower-case slots (``{noun}``, ``{adj}``, ``{group}``, ...) are drawn from the domain lexicon.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Attr:
    """A numeric attribute of an event: ``V`` in [lo, hi]; ``facts`` state it, ``asks`` question it.

    ``total`` names the sum over several events (multi-split questions), ``unit`` the counted thing.
    """

    key: str
    unit: str
    lo: int
    hi: int
    facts: tuple[str, ...]
    asks: tuple[str, ...]
    total: str


@dataclass(frozen=True)
class DomainLexicon:
    name: str
    subject_suffixes: tuple[str, ...]  # how a subject name is built from a stem; siblings share the stem
    subject_lower: bool  # drug names are common nouns ("zelotinib"), the rest are proper names
    article: str  # how prose refers to a subject: "" (zelotinib), "the " (the Varnel Legion), "The " (a title)
    event: tuple[str, ...]  # the event noun and its variants; [0] is used in questions
    place_phrase: str  # "at the {P} site"
    years: tuple[int, int]
    role: str
    event_facts: tuple[str, ...]  # sentences that introduce the event: subject, year, place
    role_facts: tuple[str, ...]
    role_asks: tuple[str, ...]
    attrs: tuple[Attr, Attr]
    profile_org: tuple[str, ...]  # bridge fact about a person: an organisation
    profile_org_ask: str
    profile_num: Attr  # bridge fact about a person: a count
    org_kinds: tuple[str, ...]
    fields: tuple[str, ...]
    groups: tuple[str, ...]
    nouns: tuple[str, ...]
    adjs: tuple[str, ...]
    verbs: tuple[str, ...]
    about: tuple[str, ...]  # sentences about a subject (background, no numbers >= 100)
    titles: tuple[str, ...]  # title heads of event documents, e.g. "{S}: trial record"


def _w(text: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in text.split("|") if w.strip())


DOMAINS: tuple[DomainLexicon, ...] = (
    DomainLexicon(
        name="medical",
        subject_suffixes=_w("tinib|pril|vastin|mab|zolam|parin|oxacin|dronate|cept|lukast|sartan|prazole"),
        subject_lower=True,
        article="",
        event=_w("clinical trial|trial|clinical study|study"),
        place_phrase="at the {P} site",
        years=(1978, 2024),
        role="principal investigator",
        event_facts=_w(
            "In {Y}, a clinical trial of {S} was run at the {P} site."
            "|The {Y} clinical trial of {S} took place at the {P} site."
            "|{S} was tested in a clinical trial at the {P} site in {Y}."
            "|During {Y}, researchers at the {P} site conducted a clinical trial of {S}."
        ),
        role_facts=_w(
            "The principal investigator of that trial was {N}."
            "|{N} served as principal investigator of the {P} trial."
            "|The study was led by {N}, its principal investigator."
        ),
        role_asks=_w(
            "Who was the principal investigator of the {Y} clinical trial of {S} at the {P} site?"
            "|Name the principal investigator who led the {Y} trial of {S} at the {P} site."
        ),
        attrs=(
            Attr("enrolment", "participants", 120, 60000,
                 _w("The trial enrolled {V} participants.|In total, {V} participants were enrolled."
                    "|Enrolment reached {V} participants before recruitment closed."),
                 _w("How many participants were enrolled in the {Y} clinical trial of {S} at the {P} site?"
                    "|What was the enrolment of the {Y} trial of {S} at the {P} site?"),
                 "combined enrolment"),
            Attr("adverse", "adverse-event reports", 100, 40000,
                 _w("Investigators logged {V} adverse-event reports.|It produced {V} adverse-event reports."
                    "|Safety monitors filed {V} adverse-event reports during follow-up."),
                 _w("How many adverse-event reports were logged in the {Y} clinical trial of {S} at the {P} site?"
                    "|What number of adverse-event reports did the {Y} trial of {S} at the {P} site produce?"),
                 "combined number of adverse-event reports"),
        ),
        profile_org=_w("{N} chairs the ethics board of the {O}.|{N} currently chairs the ethics board of the {O}."),
        profile_org_ask="Which organisation's ethics board is chaired by the principal investigator of the {Y} clinical trial of {S} at the {P} site?",
        profile_num=Attr("citations", "citations", 100, 90000,
                         _w("{N}'s papers have received {V} citations.|Work by {N} has been cited {V} times."),
                         _w("How many citations have the papers of the principal investigator of the {Y} clinical trial of {S} at the {P} site received?"),
                         "citations"),
        org_kinds=_w("Institute of Cardiology|Teaching Hospital|Medical Research Council|Cancer Centre|Clinic|"
                     "School of Public Health|Institute of Neurology|Foundation for Rare Diseases"),
        fields=_w("pharmacology|cardiology|oncology|epidemiology|clinical medicine|public health|neurology"),
        groups=_w("clinicians|pharmacists|nurses|regulators|patients|trial sponsors|hospital boards|epidemiologists"
                  "|general practitioners|ethics committees"),
        nouns=_w("dosage|side effects|blood pressure|inflammation|biomarkers|placebo control|renal function"
                 "|drug interactions|hospital admissions|follow-up visits|informed consent|tolerability"
                 "|relapse|metabolism|liver enzymes|cholesterol|immune response|symptom relief|prescribing habits"
                 "|chronic pain|randomisation|clinical endpoints|comorbidity|adherence|pharmacokinetics"
                 "|screening|diagnostic imaging|outpatient care|palliative care|vaccination"),
        adjs=_w("chronic|acute|randomised|double-blind|off-label|systemic|oral|intravenous|preventive|cardiac"
                "|metabolic|paediatric|geriatric|inflammatory|experimental|well-tolerated|first-line|adjuvant"),
        verbs=_w("complicates|reshapes|informs|constrains|undermines|clarifies|drives|reflects|accompanies"
                 "|obscures|predicts|alters"),
        about=_w(
            "{S} is a compound with {adj} uses, studied mainly for {noun}."
            "|Interest in {S} grew once {group} noticed its effect on {noun}."
            "|{S} belongs to a class of drugs that act on {noun}."
            "|Early reports on {S} focused on {noun} rather than {noun2}."
            "|Regulators have asked for more data on how {S} affects {noun}."
            "|{S} is usually given alongside standard care in {adj} cases."
            "|The mechanism of {S} remains debated among {group}."
        ),
        titles=_w("trial record|clinical summary|site report|study notes|trial overview"),
    ),
    DomainLexicon(
        name="history",
        subject_suffixes=_w("Legion|Fleet|Guard|Brigade|Militia|Company|Lancers|Regiment"),
        subject_lower=False,
        article="the ",
        event=_w("campaign|military campaign|expedition|offensive"),
        place_phrase="at {P}",
        years=(1480, 1890),
        role="commander",
        event_facts=_w(
            "In {Y}, the {S} fought a campaign at {P}."
            "|The {S} waged its {Y} campaign at {P}."
            "|At {P}, the {S} opened a campaign in {Y}."
            "|Chroniclers record that the {S} campaigned at {P} in {Y}."
        ),
        role_facts=_w(
            "Its commander was {N}.|{N} held command of the {S} during that campaign."
            "|The campaign was led by {N}, who commanded the {S}."
        ),
        role_asks=_w(
            "Who commanded the {S} during its {Y} campaign at {P}?"
            "|Name the commander of the {S} in the {Y} campaign at {P}."
        ),
        attrs=(
            Attr("soldiers", "soldiers", 150, 80000,
                 _w("The {S} mustered {V} soldiers for it.|Some {V} soldiers marched with the {S}."
                    "|Muster rolls list {V} soldiers in the field."),
                 _w("How many soldiers did the {S} muster for its {Y} campaign at {P}?"
                    "|What was the strength in soldiers of the {S} in the {Y} campaign at {P}?"),
                 "combined number of soldiers"),
            Attr("prisoners", "prisoners", 100, 30000,
                 _w("The campaign ended with {V} prisoners taken.|By its close, {V} prisoners had been taken."
                    "|Records count {V} prisoners captured."),
                 _w("How many prisoners were taken in the {Y} campaign of the {S} at {P}?"
                    "|What number of prisoners did the {S} take during its {Y} campaign at {P}?"),
                 "combined number of prisoners"),
        ),
        profile_org=_w("{N} was later made a fellow of the {O}.|In later life {N} joined the {O}."),
        profile_org_ask="Which society did the commander of the {S} in its {Y} campaign at {P} later join?",
        profile_num=Attr("letters", "surviving letters", 100, 25000,
                         _w("Archives hold {V} surviving letters written by {N}.|{V} surviving letters by {N} are catalogued."),
                         _w("How many surviving letters were written by the commander of the {S} in its {Y} campaign at {P}?"),
                         "letters"),
        org_kinds=_w("Royal Society of Antiquaries|Historical Academy|Order of the Lantern|Geographical Society"
                     "|Council of Elders|Guild of Cartographers|Chamber of Nobles"),
        fields=_w("military history|diplomatic history|early modern history|archival research|historiography"),
        groups=_w("chroniclers|archivists|historians|court officials|envoys|merchants|peasants|clergy|nobles"),
        nouns=_w("succession|supply lines|siege warfare|tribute|border disputes|alliances|mercenaries|taxation"
                 "|fortifications|treaties|royal charters|famine|river crossings|cavalry|artillery|garrison duty"
                 "|dynastic marriage|land grants|revolts|trade routes|heraldry|conscription|plunder|ransom"
                 "|court intrigue|naval blockades|pilgrimage|frontier towns"),
        adjs=_w("medieval|dynastic|feudal|fortified|provincial|imperial|rebellious|coastal|mercenary|royal"
                "|ecclesiastical|maritime|disputed|bloody|protracted|ceremonial"),
        verbs=_w("weakened|strengthened|redrew|prolonged|disrupted|shaped|ended|provoked|financed|legitimised"),
        about=_w(
            "The {S} was raised to defend the {adj} frontier."
            "|Contemporaries described the {S} as a force shaped by {noun}."
            "|The {S} served several rulers during disputes over {noun}."
            "|Historians link the fortunes of the {S} to {noun} and {noun2}."
            "|Surviving orders show that the {S} relied heavily on {noun}."
            "|The {S} carried a banner that later became a symbol of {noun}."
            "|Few units of the period were as closely tied to {noun} as the {S}."
        ),
        titles=_w("campaign record|chronicle entry|campaign history|archival note|campaign summary"),
    ),
    DomainLexicon(
        name="education",
        subject_suffixes=_w("College|Academy|Polytechnic|Grammar School|Institute of Education|Conservatory"),
        subject_lower=False,
        article="",
        event=_w("summer school|summer programme|residential summer school|summer course"),
        place_phrase="in {P}",
        years=(1965, 2024),
        role="programme director",
        event_facts=_w(
            "In {Y}, {S} ran a summer school in {P}."
            "|The {Y} summer school of {S} was held in {P}."
            "|{S} hosted a residential summer school in {P} in {Y}."
            "|During {Y}, {S} organised its summer school in {P}."
        ),
        role_facts=_w(
            "Its programme director was {N}.|{N} directed the programme that year."
            "|The summer school was run by {N} as programme director."
        ),
        role_asks=_w(
            "Who was the programme director of the {Y} summer school of {S} in {P}?"
            "|Name the programme director of {S}'s {Y} summer school in {P}."
        ),
        attrs=(
            Attr("students", "students", 100, 45000,
                 _w("It admitted {V} students.|The summer school admitted {V} students."
                    "|Admissions closed at {V} students."),
                 _w("How many students were admitted to the {Y} summer school of {S} in {P}?"
                    "|What was the number of students admitted to {S}'s {Y} summer school in {P}?"),
                 "combined number of students admitted"),
            Attr("bursaries", "bursaries", 100, 20000,
                 _w("Organisers awarded {V} bursaries.|{V} bursaries were awarded to applicants."
                    "|The programme funded {V} bursaries."),
                 _w("How many bursaries were awarded at the {Y} summer school of {S} in {P}?"
                    "|What number of bursaries did {S}'s {Y} summer school in {P} award?"),
                 "combined number of bursaries"),
        ),
        profile_org=_w("{N} sits on the governing council of the {O}.|{N} now serves on the governing council of the {O}."),
        profile_org_ask="On which body's governing council does the programme director of the {Y} summer school of {S} in {P} sit?",
        profile_num=Attr("graduates", "doctoral graduates", 100, 15000,
                         _w("{N} has supervised {V} doctoral graduates.|Over a career, {N} supervised {V} doctoral graduates."),
                         _w("How many doctoral graduates has the programme director of the {Y} summer school of {S} in {P} supervised?"),
                         "graduates"),
        org_kinds=_w("Board of Examiners|Teachers' Union|Literacy Trust|Schools Inspectorate|Curriculum Council"
                     "|Association of Head Teachers|Open Learning Foundation"),
        fields=_w("pedagogy|curriculum design|educational psychology|school leadership|adult education"),
        groups=_w("teachers|head teachers|inspectors|parents|pupils|school governors|examiners|tutors|lecturers"),
        nouns=_w("assessment|literacy|numeracy|class size|homework|exam results|teacher training|tuition fees"
                 "|attendance|early years|special needs|vocational training|school funding|inspection reports"
                 "|reading ages|streaming|mentoring|scholarships|boarding|curriculum reform|grade inflation"
                 "|lesson planning|distance learning|apprenticeships|league tables"),
        adjs=_w("secondary|primary|vocational|residential|selective|comprehensive|bilingual|remedial|gifted"
                "|inclusive|rural|urban|state-funded|independent|formative|summative"),
        verbs=_w("improves|narrows|widens|supports|distorts|measures|rewards|motivates|neglects|encourages"),
        about=_w(
            "{S} is known for its {adj} approach to {noun}."
            "|{S} was founded to widen access to {noun}."
            "|Inspectors have praised {S} for its work on {noun}."
            "|At {S}, {group} meet regularly to review {noun}."
            "|{S} has long argued that {noun} matters more than {noun2}."
            "|Admissions at {S} reflect a commitment to {adj} education."
        ),
        titles=_w("programme report|summer school record|admissions summary|programme notes|prospectus extract"),
    ),
    DomainLexicon(
        name="math",
        subject_suffixes=_w("conjecture|lemma|inequality|theorem|problem|hypothesis"),
        subject_lower=False,
        article="the ",
        event=_w("symposium|research symposium|workshop|meeting"),
        place_phrase="in {P}",
        years=(1950, 2024),
        role="organiser",
        event_facts=_w(
            "In {Y}, a symposium on the {S} was held in {P}."
            "|The {Y} symposium on the {S} took place in {P}."
            "|Mathematicians met in {P} in {Y} for a symposium on the {S}."
            "|A research symposium devoted to the {S} convened in {P} in {Y}."
        ),
        role_facts=_w("Its organiser was {N}.|{N} organised the meeting.|The symposium was organised by {N}."),
        role_asks=_w(
            "Who organised the {Y} symposium on the {S} in {P}?"
            "|Name the organiser of the {Y} symposium on the {S} held in {P}."
        ),
        attrs=(
            Attr("talks", "talks", 100, 12000,
                 _w("The programme listed {V} talks.|Speakers gave {V} talks in all.|{V} talks were presented."),
                 _w("How many talks were given at the {Y} symposium on the {S} in {P}?"
                    "|What number of talks did the {Y} symposium on the {S} in {P} list?"),
                 "combined number of talks"),
            Attr("cases", "special cases", 100, 900000,
                 _w("A computer search presented there verified {V} special cases."
                    "|Participants reported {V} special cases checked by computer."
                    "|The verification effort discussed there covered {V} special cases."),
                 _w("How many special cases were reported verified at the {Y} symposium on the {S} in {P}?"
                    "|What number of special cases did the {Y} symposium on the {S} in {P} report as verified?"),
                 "combined number of special cases verified"),
        ),
        profile_org=_w("{N} is a member of the {O}.|{N} was elected to the {O}."),
        profile_org_ask="Which academy was the organiser of the {Y} symposium on the {S} in {P} elected to?",
        profile_num=Attr("papers", "research papers", 100, 9000,
                         _w("{N} has written {V} research papers.|The bibliography of {N} runs to {V} research papers."),
                         _w("How many research papers has the organiser of the {Y} symposium on the {S} in {P} written?"),
                         "papers"),
        org_kinds=_w("Academy of Sciences|Mathematical Society|Institute for Advanced Study|Centre for Number Theory"
                     "|Society of Applied Mathematics|Geometry Circle|Logic Seminar"),
        fields=_w("number theory|combinatorics|algebraic geometry|topology|analysis|probability theory|graph theory"),
        groups=_w("mathematicians|graduate students|referees|number theorists|topologists|combinatorialists|logicians"),
        nouns=_w("prime gaps|modular forms|lattice points|graph colourings|partitions|eigenvalues|convex bodies"
                 "|random walks|elliptic curves|integer sequences|fixed points|tilings|invariants|manifolds"
                 "|counterexamples|upper bounds|asymptotics|symmetry groups|recurrences|sieve methods"
                 "|computer-assisted proofs|polynomials|knot diagrams|error terms"),
        adjs=_w("elementary|asymptotic|combinatorial|probabilistic|algebraic|analytic|sharp|effective|explicit"
                "|finite|infinite|discrete|continuous|recursive|nontrivial|conditional"),
        verbs=_w("sharpens|generalises|implies|refines|bounds|extends|simplifies|contradicts|recovers|strengthens"),
        about=_w(
            "The {S} concerns {noun} and their relation to {noun2}."
            "|The {S} remains open in its {adj} form."
            "|Work on the {S} draws on methods from {field}."
            "|A proof of the {S} would settle questions about {noun}."
            "|Partial results on the {S} rely on {adj} estimates for {noun}."
            "|The {S} is often stated in terms of {noun}."
        ),
        titles=_w("symposium report|meeting notes|proceedings summary|research note|symposium record"),
    ),
    DomainLexicon(
        name="literature",
        subject_suffixes=_w("Chronicles|Letters|Diaries|Elegies|Sonnets|Papers|Testament|Variations"),
        subject_lower=False,
        article="The ",
        event=_w("translated edition|translation|foreign edition|edition"),
        place_phrase="in {P}",
        years=(1900, 2024),
        role="translator",
        event_facts=_w(
            "In {Y}, a translated edition of The {S} was published in {P}."
            "|The {Y} translated edition of The {S} appeared in {P}."
            "|A publisher in {P} issued a translated edition of The {S} in {Y}."
            "|The {S} reached readers in {P} through a translated edition in {Y}."
        ),
        role_facts=_w("Its translator was {N}.|The translation was the work of {N}.|{N} translated that edition."),
        role_asks=_w(
            "Who translated the {Y} edition of The {S} published in {P}?"
            "|Name the translator of the {Y} translated edition of The {S} issued in {P}."
        ),
        attrs=(
            Attr("print_run", "copies", 500, 250000,
                 _w("Its first print run was {V} copies.|The publisher printed {V} copies."
                    "|A print run of {V} copies sold out slowly."),
                 _w("How many copies were printed in the first run of the {Y} translated edition of The {S} published in {P}?"
                    "|What was the print run of the {Y} edition of The {S} published in {P}?"),
                 "combined print run"),
            Attr("pages", "pages", 100, 2400,
                 _w("The edition ran to {V} pages.|It was bound in {V} pages.|That volume had {V} pages."),
                 _w("How many pages did the {Y} translated edition of The {S} published in {P} have?"
                    "|What was the page count of the {Y} edition of The {S} issued in {P}?"),
                 "combined page count"),
        ),
        profile_org=_w("{N} is a fellow of the {O}.|{N} was admitted as a fellow of the {O}."),
        profile_org_ask="Of which society is the translator of the {Y} edition of The {S} published in {P} a fellow?",
        profile_num=Attr("reviews", "book reviews", 100, 6000,
                         _w("{N} has published {V} book reviews.|Over the years {N} wrote {V} book reviews."),
                         _w("How many book reviews has the translator of the {Y} edition of The {S} published in {P} written?"),
                         "reviews"),
        org_kinds=_w("Society of Letters|PEN Centre|Translators' Guild|Poetry Foundation|Academy of Letters"
                     "|Literary Institute|Circle of Critics"),
        fields=_w("comparative literature|literary criticism|translation studies|poetics|book history"),
        groups=_w("critics|readers|translators|publishers|booksellers|poets|editors|scholars|librarians"),
        nouns=_w("narrative voice|metaphor|unreliable narrators|exile|memory|epistolary form|irony|landscape"
                 "|grief|satire|censorship|serial publication|dialect|rhyme|allegory|childhood|urban life"
                 "|seascapes|fragmentary endings|footnotes|marginalia|pastoral|melancholy|free verse"),
        adjs=_w("lyrical|modernist|baroque|epistolary|elegiac|satirical|pastoral|gothic|fragmentary|experimental"
                "|confessional|allegorical|sparse|ornate|autobiographical|posthumous"),
        verbs=_w("evokes|subverts|mirrors|revisits|parodies|complicates|dramatises|questions|echoes|recasts"),
        about=_w(
            "The {S} is a {adj} work concerned with {noun}."
            "|Critics read The {S} as a meditation on {noun}."
            "|The {S} {verb} older traditions of {noun}."
            "|Much of The {S} is told through {noun}."
            "|Readers have long debated the role of {noun} in The {S}."
            "|The {S} was admired by {group} for its treatment of {noun}."
        ),
        titles=_w("edition history|publication record|bibliographic note|edition notes|catalogue entry"),
    ),
    DomainLexicon(
        name="law",
        subject_suffixes=_w("Water Act|Land Act|Tenancy Act|Fisheries Act|Harbour Act|Mining Act|Forestry Act"),
        subject_lower=False,
        article="the ",
        event=_w("appeal hearing|hearing|appeal|court hearing"),
        place_phrase="in {P}",
        years=(1950, 2024),
        role="presiding judge",
        event_facts=_w(
            "In {Y}, an appeal hearing under the {S} was held in {P}."
            "|The {Y} appeal hearing under the {S} took place in {P}."
            "|A court in {P} heard an appeal under the {S} in {Y}."
            "|Litigants brought an appeal under the {S} before the court in {P} in {Y}."
        ),
        role_facts=_w("The presiding judge was {N}.|{N} presided over the hearing.|The bench was led by {N}, who presided."),
        role_asks=_w(
            "Who was the presiding judge at the {Y} appeal hearing under the {S} in {P}?"
            "|Name the judge who presided over the {Y} appeal under the {S} in {P}."
        ),
        attrs=(
            Attr("claimants", "claimants", 100, 30000,
                 _w("The appeal was brought by {V} claimants.|{V} claimants joined the appeal."
                    "|Court papers list {V} claimants."),
                 _w("How many claimants brought the {Y} appeal hearing under the {S} in {P}?"
                    "|What number of claimants joined the {Y} appeal under the {S} in {P}?"),
                 "combined number of claimants"),
            Attr("damages", "thousand euros in damages", 100, 500000,
                 _w("The court awarded {V} thousand euros in damages.|Damages came to {V} thousand euros."
                    "|An award of {V} thousand euros in damages followed."),
                 _w("How much was awarded in damages, in thousand euros, at the {Y} appeal hearing under the {S} in {P}?"
                    "|What damages, in thousand euros, did the {Y} appeal under the {S} in {P} award?"),
                 "combined damages in thousand euros"),
        ),
        profile_org=_w("{N} sits on the disciplinary panel of the {O}.|{N} was appointed to the disciplinary panel of the {O}."),
        profile_org_ask="On whose disciplinary panel does the presiding judge of the {Y} appeal hearing under the {S} in {P} sit?",
        profile_num=Attr("judgments", "written judgments", 100, 8000,
                         _w("{N} has delivered {V} written judgments.|Law reports record {V} written judgments by {N}."),
                         _w("How many written judgments has the presiding judge of the {Y} appeal hearing under the {S} in {P} delivered?"),
                         "judgments"),
        org_kinds=_w("Bar Council|Law Society|Judicial College|Commission on Human Rights|Institute of Arbitrators"
                     "|Legal Aid Board|Court of Auditors"),
        fields=_w("administrative law|property law|environmental law|constitutional law|tort law|civil procedure"),
        groups=_w("judges|barristers|solicitors|claimants|defendants|legislators|tribunals|regulators|landowners"),
        nouns=_w("standing|due process|judicial review|precedent|easements|riparian rights|compensation|injunctions"
                 "|statutory interpretation|burden of proof|legal aid|licensing|planning consent|expropriation"
                 "|contempt of court|class actions|limitation periods|costs orders|tenancy disputes|arbitration"
                 "|water abstraction|fishing quotas|public nuisance|proportionality"),
        adjs=_w("statutory|procedural|substantive|equitable|constitutional|appellate|binding|persuasive|punitive"
                "|administrative|retrospective|discretionary|contested|landmark|interim"),
        verbs=_w("restricts|clarifies|overturns|extends|narrows|codifies|limits|entrenches|weakens|reinterprets"),
        about=_w(
            "The {S} governs {noun} and related questions of {noun2}."
            "|The {S} was passed after long disputes over {noun}."
            "|Courts have read the {S} as a {adj} safeguard for {noun}."
            "|Amendments to the {S} have repeatedly touched on {noun}."
            "|The {S} gives {group} limited powers over {noun}."
            "|Commentators see the {S} as a test case for {noun}."
        ),
        titles=_w("case note|hearing record|law report|appeal summary|docket entry"),
    ),
    DomainLexicon(
        name="technology",
        subject_suffixes=_w("protocol|platform|compiler|database|router|framework|kernel|scheduler"),
        subject_lower=False,
        article="the ",
        event=_w("deployment|production deployment|rollout|large deployment"),
        place_phrase="at the {P} data centre",
        years=(1985, 2024),
        role="chief engineer",
        event_facts=_w(
            "In {Y}, the {S} was deployed at the {P} data centre."
            "|The {Y} deployment of the {S} took place at the {P} data centre."
            "|Engineers rolled out the {S} at the {P} data centre in {Y}."
            "|The {P} data centre adopted the {S} in a {Y} deployment."
        ),
        role_facts=_w(
            "Its chief engineer was {N}.|{N} was chief engineer on the rollout."
            "|The deployment was overseen by {N} as chief engineer."
        ),
        role_asks=_w(
            "Who was chief engineer of the {Y} deployment of the {S} at the {P} data centre?"
            "|Name the chief engineer of the {Y} rollout of the {S} at the {P} data centre."
        ),
        attrs=(
            Attr("servers", "servers", 100, 120000,
                 _w("It ran on {V} servers.|The rollout covered {V} servers.|{V} servers were migrated."),
                 _w("How many servers did the {Y} deployment of the {S} at the {P} data centre cover?"
                    "|On how many servers was the {S} deployed at the {P} data centre in {Y}?"),
                 "combined number of servers"),
            Attr("incidents", "logged incidents", 100, 25000,
                 _w("Operators logged {V} incidents in the first year.|The team recorded {V} logged incidents."
                    "|Monitoring showed {V} logged incidents after launch."),
                 _w("How many incidents were logged after the {Y} deployment of the {S} at the {P} data centre?"
                    "|What number of logged incidents followed the {Y} rollout of the {S} at the {P} data centre?"),
                 "combined number of logged incidents"),
        ),
        profile_org=_w("{N} is on the technical steering committee of the {O}.|{N} joined the technical steering committee of the {O}."),
        profile_org_ask="On which organisation's technical steering committee is the chief engineer of the {Y} deployment of the {S} at the {P} data centre?",
        profile_num=Attr("patents", "patents", 100, 4000,
                         _w("{N} is named on {V} patents.|Patent offices list {N} as inventor on {V} patents."),
                         _w("On how many patents is the chief engineer of the {Y} deployment of the {S} at the {P} data centre named?"),
                         "patents"),
        org_kinds=_w("Open Systems Foundation|Standards Consortium|Computing Society|Networking Alliance"
                     "|Software Freedom Trust|Cloud Native Forum|Hardware Guild"),
        fields=_w("distributed systems|networking|databases|operating systems|security engineering|cloud computing"),
        groups=_w("engineers|operators|vendors|system administrators|developers|architects|security teams|users"),
        nouns=_w("latency|throughput|fault tolerance|load balancing|encryption|caching|replication|backward compatibility"
                 "|memory leaks|configuration drift|observability|rate limiting|failover|schema migrations"
                 "|packet loss|technical debt|containerisation|access control|garbage collection|consensus"
                 "|build pipelines|firmware updates|virtual machines|bandwidth"),
        adjs=_w("distributed|scalable|fault-tolerant|open-source|proprietary|low-latency|legacy|modular|encrypted"
                "|asynchronous|stateless|embedded|redundant|experimental|lightweight"),
        verbs=_w("reduces|increases|hides|exposes|simplifies|complicates|automates|replaces|accelerates|limits"),
        about=_w(
            "The {S} is a {adj} system designed around {noun}."
            "|The {S} was built to address problems of {noun}."
            "|Operators value the {S} for its handling of {noun}."
            "|The {S} trades {noun} for {noun2}."
            "|Critics of the {S} point to its approach to {noun}."
            "|Later versions of the {S} added support for {adj} {noun}."
        ),
        titles=_w("deployment report|rollout notes|operations record|engineering summary|incident review"),
    ),
    DomainLexicon(
        name="finance",
        subject_suffixes=_w("Growth Fund|Income Fund|Infrastructure Fund|Pension Trust|Capital Partners|Bond Fund"),
        subject_lower=False,
        article="the ",
        event=_w("bond issue|bond offering|debt issue|bond sale"),
        place_phrase="in {P}",
        years=(1970, 2024),
        role="lead underwriter",
        event_facts=_w(
            "In {Y}, the {S} launched a bond issue in {P}."
            "|The {Y} bond issue of the {S} was arranged in {P}."
            "|The {S} raised money through a bond issue in {P} in {Y}."
            "|Investors in {P} took part in a {Y} bond issue by the {S}."
        ),
        role_facts=_w(
            "Its lead underwriter was {N}.|{N} acted as lead underwriter.|The issue was underwritten by {N} as lead."
        ),
        role_asks=_w(
            "Who was lead underwriter of the {Y} bond issue of the {S} in {P}?"
            "|Name the lead underwriter of the {S}'s {Y} bond issue in {P}."
        ),
        attrs=(
            Attr("raised", "million euros", 100, 90000,
                 _w("The issue raised {V} million euros.|It brought in {V} million euros."
                    "|Proceeds came to {V} million euros."),
                 _w("How much did the {Y} bond issue of the {S} in {P} raise, in million euros?"
                    "|What were the proceeds, in million euros, of the {S}'s {Y} bond issue in {P}?"),
                 "combined proceeds in million euros"),
            Attr("investors", "institutional investors", 100, 20000,
                 _w("It was taken up by {V} institutional investors.|{V} institutional investors subscribed."
                    "|The order book showed {V} institutional investors."),
                 _w("How many institutional investors took part in the {Y} bond issue of the {S} in {P}?"
                    "|What number of institutional investors subscribed to the {S}'s {Y} bond issue in {P}?"),
                 "combined number of institutional investors"),
        ),
        profile_org=_w("{N} sits on the audit committee of the {O}.|{N} was named to the audit committee of the {O}."),
        profile_org_ask="On which organisation's audit committee does the lead underwriter of the {Y} bond issue of the {S} in {P} sit?",
        profile_num=Attr("deals", "underwritten deals", 100, 7000,
                         _w("{N} has worked on {V} underwritten deals.|League tables credit {N} with {V} underwritten deals."),
                         _w("How many underwritten deals has the lead underwriter of the {Y} bond issue of the {S} in {P} worked on?"),
                         "deals"),
        org_kinds=_w("Savings Bank|Stock Exchange|Banking Association|Clearing House|Investment Council"
                     "|Treasury Board|Credit Union"),
        fields=_w("corporate finance|asset management|banking|public finance|fixed income|insurance"),
        groups=_w("investors|analysts|underwriters|regulators|pension trustees|fund managers|auditors|central bankers"),
        nouns=_w("yield spreads|credit ratings|liquidity|leverage|coupon payments|maturity dates|inflation risk"
                 "|currency exposure|dividends|capital requirements|default risk|hedging|refinancing"
                 "|interest rates|collateral|market volatility|fees|bond covenants|secondary trading"
                 "|duration|tax treatment|sovereign debt|disclosure rules|benchmark indices"),
        adjs=_w("long-dated|short-term|investment-grade|high-yield|illiquid|diversified|leveraged|defensive"
                "|index-linked|callable|secured|unsecured|volatile|conservative|speculative"),
        verbs=_w("raises|lowers|offsets|amplifies|reprices|hedges|dampens|exposes|rewards|penalises"),
        about=_w(
            "The {S} invests mainly with an eye to {noun}."
            "|The {S} is managed to limit {noun}."
            "|Analysts describe the {S} as a {adj} vehicle sensitive to {noun}."
            "|The {S} reports regularly to {group} on {noun}."
            "|The strategy of the {S} centres on {noun} and {noun2}."
            "|Over the years the {S} has shifted its stance on {noun}."
        ),
        titles=_w("issuance record|deal summary|prospectus note|market report|fund report"),
    ),
)

#: essay sentences usable in any domain (slots are filled from the domain's lexicon)
ESSAY: tuple[str, ...] = _w(
    "{group} increasingly treat {noun} as a question of {noun2}."
    "|Few topics in {field} have attracted as much attention as {adj} {noun}."
    "|In {place}, debates about {noun} have shaped how {group} think about {noun2}."
    "|The {adj} character of {noun} {verb} the way {group} approach {noun2}."
    "|Critics argue that the study of {noun} is too often confused with that of {noun2}."
    "|A survey of {few} {group} found that {noun} ranked as their most frequent concern."
    "|{person} of the {org} has written widely on {adj} {noun}."
    "|Since {decade}, the study of {noun} has moved from the margins of {field} towards its centre."
    "|The link between {noun} and {noun2} remains poorly understood."
    "|Observers in {place} note that questions of {noun} rarely follow a single pattern."
    "|Most {group} agree that the topic of {adj} {noun} deserves closer study."
    "|Textbooks on {field} usually introduce {noun} before {noun2}."
    "|Disagreements over {noun} have divided {group} for decades."
    "|A report from the {org} described {noun} as {adj} and hard to measure."
    "|Attempts to standardise {noun} have met resistance from {group}."
    "|The history of {field} is partly a history of {noun}."
    "|In some regions, concern about {noun} {verb} everyday decisions about {noun2}."
    "|{person} once remarked that the study of {noun} is where {field} meets {noun2}."
    "|Local practice in {place} differs sharply on {noun}."
    "|It is rarely possible to discuss {noun} without also considering {noun2}."
    "|Roughly {pct} percent of {group} reported changes in {noun}."
    "|The {org} publishes guidance on {adj} {noun} every few years."
    "|Newcomers to {field} often underestimate {noun}."
    "|Workshops in {place} brought {group} together to compare notes on {noun}."
    "|Much depends on whether the question of {noun} is treated as {adj} or as {adj2}."
    "|There is no consensus on how {noun} should be weighed against {noun2}."
    "|Older accounts of {field} gave little space to {noun}."
    "|Some {group} see {noun} as an opportunity rather than a burden."
    "|The vocabulary of {field} has changed as {noun} gained prominence."
    "|Case studies from {place} illustrate how attention to {noun} {verb} {noun2}."
    "|The question of {noun} returns whenever {group} revisit {noun2}."
    "|Both {group} and {group2} have a stake in {noun}."
    "|Commentary on {noun} tends to be either {adj} or {adj2}, seldom both."
    "|Archives in {place} hold material on {noun} dating back to {decade}."
    "|The {org} has funded {few} projects on {noun}."
    "|The study of {noun} is sometimes described as the hidden side of {field}."
    "|Practical guides for {group} now include a chapter on {noun}."
    "|Comparisons between {place} and {place2} show how differently {noun} is handled."
    "|The idea that attention to {noun} {verb} {noun2} is widely repeated but rarely tested."
    "|For {group}, dealing with {noun} is less an abstraction than a daily routine."
    "|Interest in {adj} {noun} peaked in {decade} and has since revived."
    "|{person} argued that {field} had neglected {noun} for too long."
)

CONNECTIVES: tuple[str, ...] = _w(
    "However|Moreover|In practice|By contrast|For this reason|At the same time|Even so|In addition|As a result"
    "|Notably|Historically|Meanwhile|Nevertheless|Still|Consequently|In many cases|Taken together|On balance"
    "|Above all|Put simply|Crucially|Similarly|In turn|Admittedly|Indeed|To be sure|More broadly|Over time"
    "|In recent years|Likewise|Elsewhere|Even then|Understandably|Of course"
)

#: sentences that point to another event of the same subject without stating any of its values
MENTIONS: tuple[str, ...] = _w(
    "Another {E} of {AS}, held {PP} in {Y}, is described in a separate record."
    "|A separate {E} of {AS} took place {PP} in {Y}; its figures are reported elsewhere."
    "|{AS} also featured in a {Y} {E} {PP}, which is documented separately."
    "|This should not be confused with the {Y} {E} of {AS} {PP}."
)

#: sentences of a person's profile (background, no numbers >= 100)
PROFILE: tuple[str, ...] = _w(
    "{N} trained in {field} and later specialised in {noun}."
    "|Colleagues describe {N} as a careful student of {noun}."
    "|{N} has lectured in {place} on {adj} {noun}."
    "|Early in a long career, {N} worked on {noun} and {noun2}."
    "|{N} is often consulted by {group} on questions of {noun}."
    "|Interviews with {N} return again and again to {noun}."
)

FIRST_NAMES: tuple[str, ...] = _w(
    "Ada|Alma|Anders|Anika|Arjun|Astrid|Beatriz|Bruno|Camille|Carlos|Chiara|Dalia|Daniel|Dmitri|Elena|Elif|Emil"
    "|Esther|Farah|Felix|Freya|Gabriel|Greta|Hana|Hugo|Ilse|Imran|Ines|Ivan|Jana|Jonas|Julia|Kai|Karim|Kenji|Lara"
    "|Leon|Lina|Lucia|Magnus|Maren|Mateo|Mei|Milan|Mira|Nadia|Nikolai|Nora|Omar|Oskar|Paula|Pedro|Priya|Rafael"
    "|Rosa|Rui|Sami|Sara|Selma|Sofia|Stefan|Tariq|Teresa|Theo|Tomas|Una|Valentin|Vera|Viktor|Wen|Yara|Yusuf|Zofia"
    "|Agnes|Benedikt|Cecilia|Dorota|Edgar|Fatima|Goran|Helga|Ingrid|Jakob|Klara|Lorenzo|Marta|Noah|Olga|Pavel"
)

ONSETS: tuple[str, ...] = _w("b|br|c|d|dr|f|g|gr|h|k|l|m|n|p|r|s|st|t|tr|v|w|z|l|m|n|r|s|t")
VOWELS: tuple[str, ...] = _w("a|e|i|o|u|a|e|i|o|ei|ia|ai|ou")
CODAS: tuple[str, ...] = ("", "", "", "", "", "", "n", "r", "l", "s", "m", "nd", "rk", "st")
PLACE_SUFFIXES: tuple[str, ...] = _w("ford|dale|holm|wick|bury|stead|mouth|haven|moor|field|gate|ton|by|ness|combe")
SURNAME_SUFFIXES: tuple[str, ...] = _w("sen|ova|ez|ard|ini|berg|ski|ley|well|mann|ic|oglu|aro|ens|quist|ier")
ORG_STEM_SUFFIXES: tuple[str, ...] = _w("ton|wood|vale|crest|field|bridge|ridge|ley|mere|hurst")
