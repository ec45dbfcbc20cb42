"""A Wikipedia-like corpus of any size over a controlled entity graph, with multi-hop questions whose
gold passages are known, deterministic from a seed (issue 29).

The world: countries, cities (each in a country), organisations (universities, companies, newspapers,
orchestras; each founded in a year by a person and based in a city) and people (born in a city in a
year, educated at a university, working for an organisation, some married). Every entity has an
article of one to three passages; each fact is stated in exactly one passage, the one of its subject,
so the gold passages of a question that chains two facts are known. Universities are also named in a
second form ("University of Kesmoor" in their article, sometimes "Kesmoor University" elsewhere), so
the synonym stage has real aliases to find; years are shared by thousands of facts, as in Wikipedia.

    python benchmarks/scale_corpus.py --passages 10000 --out /tmp/scale10k   # corpus-*.jsonl, questions.jsonl

The shards stay under the loader's 20 MB file limit; ``passages()`` streams the same documents for
the Python API without writing files. Questions follow the format of ../shared/data/musique
(``question``, ``answer``, ``supporting_ids``), with the ``bridge`` entity the two hops share."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FIRST_NAMES = (
    "Aldric", "Mira", "Oskar", "Helena", "Tomas", "Ingrid", "Rafael", "Yara", "Lucien", "Noor", "Emil", "Sofia",
    "Anton", "Greta", "Matteo", "Liese", "Kenji", "Amara", "Pavel", "Dalia", "Henrik", "Elif", "Jonas", "Marta",
    "Viktor", "Ada", "Felix", "Irena", "Casimir", "Leona", "Bruno", "Talia", "Dmitri", "Rosa", "Magnus", "Ines",
    "Arjun", "Clara", "Stefan", "Nadia", "Hugo", "Vera", "Olaf", "Zofia", "Marcel", "Lena", "Tobias", "Alma",
    "Ruben", "Petra", "Gideon", "Esme", "Corin", "Hanna", "Isidor", "Freya", "Leopold", "Maren", "Silas", "Edith",
    "Konrad", "Beatrix", "Florian", "Agnes", "Valentin", "Livia", "Bastian", "Selma", "Julius", "Ottilie",
    "Cyril", "Dagny", "Ansel", "Yvette", "Tiberius", "Wanda", "Laszlo", "Ilse", "Benedikt", "Rhea",
)
_ONSETS = ("B", "C", "D", "F", "G", "H", "K", "L", "M", "N", "P", "R", "S", "T", "V", "W", "Br", "Dr", "Gr", "Kr",
           "St", "Tr", "Th", "Sh", "Ch", "Bl", "Fl", "Gl", "Pr", "Sk")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "ae")
_CODAS = ("n", "r", "l", "s", "th", "nd", "rk", "st", "v", "m", "x", "rn", "lt", "sk", "d", "g")
SURNAME_ENDS = ("holt", "son", "berg", "ova", "ini", "ez", "mann", "ard", "ley", "ski", "ton", "ers")
CITY_ENDS = ("ford", "burg", "mouth", "stad", "ville", "haven", "dale", "wick", "port", "field", "grad", "mere")
COUNTRY_ENDS = ("ia", "land", "mark", "ora", "avia", "esia")
OCCUPATIONS = ("architect", "chemist", "painter", "novelist", "engineer", "economist", "composer", "physician",
               "historian", "diplomat", "photographer", "mathematician", "sculptor", "journalist", "botanist")
ROLES = ("an engineer", "a director", "an editor", "a researcher", "a conductor", "a designer", "an analyst")
ORG_KINDS = (("University", "a public research university"), ("Motors", "a car manufacturer"),
             ("Gazette", "a daily newspaper"), ("Orchestra", "a symphony orchestra"),
             ("Records", "a record label"), ("Shipping", "a shipping company"), ("Bank", "a commercial bank"),
             ("Institute", "a research institute"))
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
UNIVERSITY = 0  # the index of ORG_KINDS that people study at

# Shares of the passages by kind of article (ours: a people-heavy encyclopedia, as Wikipedia is).
CITY_SHARE, ORG_SHARE = 0.10, 0.25
PASSAGES_PER_ARTICLE = 2  # people, cities and organisations; countries have one
SHARD_PASSAGES = 20_000  # about 12 MB of JSON Lines per file, under the loader's 20 MB limit


def _word(i: int, ends: tuple[str, ...]) -> str:
    """The i-th made-up word: a syllable, more syllables in bijective numeration, an ending; distinct
    numbers give distinct words (the tests check it)."""
    i, onset = divmod(i, len(_ONSETS))
    i, vowel = divmod(i, len(_VOWELS))
    i, coda = divmod(i, len(_CODAS))
    i, end = divmod(i, len(ends))
    word = _ONSETS[onset] + _VOWELS[vowel] + _CODAS[coda]
    while i:
        i, r = divmod(i - 1, len(_VOWELS) * len(_CODAS))
        word += _VOWELS[r % len(_VOWELS)] + _CODAS[r // len(_VOWELS)]
    return (word + ends[end]).capitalize()


_SYLLABLES = len(_ONSETS) * len(_VOWELS) * len(_CODAS)
_SURNAMES = _SYLLABLES * len(SURNAME_ENDS) * 16  # surnames of one to three syllables


def _scatter(n: int, space: int, rng: np.random.Generator) -> np.ndarray:
    """n distinct numbers below ``space`` in random order (an affine bijection, no list of the space)."""
    if n > space:
        raise ValueError(f"name space too small: {n} names from {space}")
    while True:
        a = int(rng.integers(1, space))
        if np.gcd(a, space) == 1:
            break
    b = int(rng.integers(0, space))
    return (np.arange(n, dtype=np.int64) * a + b) % space


@dataclass(frozen=True)
class Sizes:
    countries: int
    cities: int
    orgs: int
    people: int
    extra: int  # 0 or 1: the last person's article has a third passage so the total is exact

    @classmethod
    def for_passages(cls, n: int) -> Sizes:
        if n < 40:
            raise ValueError("the scale corpus needs at least 40 passages")
        countries = max(4, n // 2000)
        rest = n - countries
        cities = max(2, int(rest * CITY_SHARE) // PASSAGES_PER_ARTICLE)
        orgs = max(len(ORG_KINDS), int(rest * ORG_SHARE) // PASSAGES_PER_ARTICLE)
        left = rest - PASSAGES_PER_ARTICLE * (cities + orgs)
        return cls(countries, cities, orgs, left // 2, left % 2)


class ScaleCorpus:
    """The world for ``n`` passages and ``seed``; ``passages()`` and ``questions()`` read it."""

    def __init__(self, n: int, seed: int = 0) -> None:
        self.n, self.seed = n, seed
        self.sizes = s = Sizes.for_passages(n)
        rng = np.random.default_rng(seed)
        self.city_country = rng.integers(0, s.countries, s.cities)
        self.capital = np.array([self._capital_of(c, rng) for c in range(s.countries)], dtype=np.int64)
        self.city_year = rng.integers(1050, 1800, s.cities)
        self.org_kind = np.arange(s.orgs) % len(ORG_KINDS)  # every kind, universities among them
        rng.shuffle(self.org_kind)
        self.org_city = rng.integers(0, s.cities, s.orgs)
        self.org_founder = rng.integers(0, s.people, s.orgs)
        self.birth_city = rng.integers(0, s.cities, s.people)
        self.birth_year = rng.integers(1850, 1975, s.people)
        self.org_year = self.birth_year[self.org_founder] + rng.integers(25, 45, s.orgs)  # by a grown founder
        self.birth_day = rng.integers(1, 29, s.people)
        self.birth_month = rng.integers(0, 12, s.people)
        universities = np.flatnonzero(self.org_kind == UNIVERSITY)
        self.university = universities[rng.integers(0, len(universities), s.people)]
        self.employer = rng.integers(0, s.orgs, s.people)
        self.occupation = rng.integers(0, len(OCCUPATIONS), s.people)
        self.role = rng.integers(0, len(ROLES), s.people)
        self.alias_used = rng.random(s.people) < 0.5  # "Kesmoor University" instead of "University of Kesmoor"
        self.spouse = self._pairs(rng)
        self._names(rng)
        self._layout(rng)

    def _capital_of(self, country: int, rng: np.random.Generator) -> int:
        cities = np.flatnonzero(self.city_country == country)
        if not len(cities):  # a country without a city of its own gets one moved into it
            city = int(rng.integers(0, len(self.city_country)))
            self.city_country[city] = country
            return city
        return int(cities[rng.integers(0, len(cities))])

    def _pairs(self, rng: np.random.Generator) -> np.ndarray:
        """Married couples among a third of the people; -1 for the unmarried."""
        people = self.sizes.people
        spouse = np.full(people, -1, dtype=np.int64)
        chosen = rng.permutation(people)[: (people // 3) * 2]
        a, b = chosen[0::2], chosen[1::2]
        spouse[a], spouse[b] = b, a
        return spouse

    def _names(self, rng: np.random.Generator) -> None:
        s = self.sizes
        self.country_word = _scatter(s.countries, _SYLLABLES * len(COUNTRY_ENDS) * 4, rng)
        self.city_word = _scatter(s.cities, _SYLLABLES * len(CITY_ENDS) * 64, rng)
        self.org_word = _scatter(s.orgs, _SYLLABLES * 256, rng)
        self.person_name = _scatter(s.people, len(FIRST_NAMES) * _SURNAMES, rng)

    def country(self, i: int) -> str:
        return _word(int(self.country_word[i]), COUNTRY_ENDS)

    def city(self, i: int) -> str:
        return _word(int(self.city_word[i]), CITY_ENDS)

    def org(self, i: int, *, alias: bool = False) -> str:
        word = _word(int(self.org_word[i]), ("",))
        kind = ORG_KINDS[int(self.org_kind[i])][0]
        if kind == "University":
            return f"{word} University" if alias else f"University of {word}"
        return f"{word} {kind}"

    def person(self, i: int) -> str:
        first, surname = divmod(int(self.person_name[i]), _SURNAMES)
        return f"{FIRST_NAMES[first]} {_word(surname, SURNAME_ENDS)}"

    # where each article's passages are ------------------------------------------------------------
    def _layout(self, rng: np.random.Generator) -> None:
        """Articles in a shuffled order (any prefix of the corpus mixes every kind); article a holds
        the passages ``start[a] .. start[a] + length[a] - 1``."""
        s = self.sizes
        kinds = np.concatenate([np.full(s.countries, 0), np.full(s.cities, 1), np.full(s.orgs, 2),
                                np.full(s.people, 3)])
        local = np.concatenate([np.arange(s.countries), np.arange(s.cities), np.arange(s.orgs),
                                np.arange(s.people)])
        length = np.where(kinds == 0, 1, PASSAGES_PER_ARTICLE)
        if s.extra:
            length[-1] += 1
        order = rng.permutation(len(kinds))
        self.article_kind, self.article_local, self.article_length = kinds[order], local[order], length[order]
        self.article_start = np.concatenate([[0], np.cumsum(self.article_length)[:-1]])
        self._article_of = {}
        for a in range(len(order)):
            self._article_of[(int(self.article_kind[a]), int(self.article_local[a]))] = a
        assert int(self.article_length.sum()) == self.n

    def passage_id(self, kind: int, local: int, part: int) -> str:
        a = self._article_of[(kind, local)]
        return f"sc{int(self.article_start[a]) + part:07d}"

    # text ----------------------------------------------------------------------------------------
    def passages(self) -> Iterator[dict[str, str]]:
        """Every passage in corpus order as {"id", "title", "text"} (one document each, as in MuSiQue)."""
        writers = (self._country_text, self._city_text, self._org_text, self._person_text)
        for a in range(len(self.article_kind)):
            kind, local = int(self.article_kind[a]), int(self.article_local[a])
            title, parts = writers[kind](local)
            if int(self.article_length[a]) > len(parts):
                parts.append(f"{title} is remembered in the archives of {self.city(local % self.sizes.cities)}.")
            for p, text in enumerate(parts[: int(self.article_length[a])]):
                yield {"id": f"sc{int(self.article_start[a]) + p:07d}", "title": title, "text": text}

    def _country_text(self, c: int) -> tuple[str, list[str]]:
        name = self.country(c)
        capital = self.city(int(self.capital[c]))
        return name, [f"{name} is a country whose capital is {capital}. The territory of {name} was unified in "
                      f"{1500 + (c * 37) % 400} and it has been a republic since {1900 + (c * 13) % 110}."]

    def _city_text(self, c: int) -> tuple[str, list[str]]:
        name, country = self.city(c), self.country(int(self.city_country[c]))
        twin = self.city((c * 7 + 3) % self.sizes.cities)
        return name, [
            f"{name} is a city in {country}. It was founded in {int(self.city_year[c])} and has a population of "
            f"{(c * 7919) % 900 + 20},{(c * 31) % 900 + 100}.",
            f"The old town of {name} grew around a river crossing. {name} is twinned with {twin}, and its "
            f"market charter dates from {int(self.city_year[c]) + 40 + c % 60}."]

    def _org_text(self, o: int) -> tuple[str, list[str]]:
        name = self.org(o)
        description = ORG_KINDS[int(self.org_kind[o])][1]
        founder = self.person(int(self.org_founder[o]))
        city = self.city(int(self.org_city[o]))
        return name, [
            f"{name} is {description} founded in {int(self.org_year[o])} by {founder}. Its headquarters are in "
            f"{city}.",
            f"By {int(self.org_year[o]) + 20 + o % 30} {name} employed about {(o * 53) % 4000 + 100} people. "
            f"In {int(self.org_year[o]) + 5 + o % 15} it opened a second site."]

    def _person_text(self, p: int) -> tuple[str, list[str]]:
        name = self.person(p)
        born = f"{int(self.birth_day[p])} {MONTHS[int(self.birth_month[p])]} {int(self.birth_year[p])}"
        early = (f"{name} (born {born}) is a {OCCUPATIONS[int(self.occupation[p])]}. {name} was born in "
                 f"{self.city(int(self.birth_city[p]))}.")
        if self.spouse[p] >= 0:
            spouse = int(self.spouse[p])
            married = max(int(self.birth_year[p]), int(self.birth_year[spouse])) + 25
            early += f" {name} married {self.person(spouse)} in {married}."
        uni = self.org(int(self.university[p]), alias=bool(self.alias_used[p]))
        joined = int(self.birth_year[p]) + 24
        career = (f"{name} studied at {uni}, graduating in {int(self.birth_year[p]) + 22}. In {joined} {name} "
                  f"joined {self.org(int(self.employer[p]))} as {ROLES[int(self.role[p])]}.")
        return name, [early, career]

    # questions -----------------------------------------------------------------------------------
    def questions(self, count: int, seed: int | None = None) -> list[dict[str, object]]:
        """``count`` two-hop questions (five templates in turn) over random subjects."""
        rng = np.random.default_rng(self.seed + 1 if seed is None else seed)
        s = self.sizes
        out: list[dict[str, object]] = []
        templates = (self._q_birth_country, self._q_founder_birthplace, self._q_employer_city,
                     self._q_university_year, self._q_spouse_birthplace)
        while len(out) < count:
            template = templates[len(out) % len(templates)]
            subject = int(rng.integers(0, s.orgs if template == self._q_founder_birthplace else s.people))
            q = template(subject)
            if q is not None:
                q["id"] = f"scq{len(out):05d}"
                out.append(q)
        return out

    def _q_birth_country(self, p: int) -> dict[str, object]:
        city = int(self.birth_city[p])
        return {"question": f"In which country was {self.person(p)} born?",
                "answer": self.country(int(self.city_country[city])), "bridge": self.city(city),
                "supporting_ids": [self.passage_id(3, p, 0), self.passage_id(1, city, 0)]}

    def _q_founder_birthplace(self, o: int) -> dict[str, object]:
        founder = int(self.org_founder[o])
        return {"question": f"In which city was the founder of {self.org(o)} born?",
                "answer": self.city(int(self.birth_city[founder])), "bridge": self.person(founder),
                "supporting_ids": [self.passage_id(2, o, 0), self.passage_id(3, founder, 0)]}

    def _q_employer_city(self, p: int) -> dict[str, object]:
        org = int(self.employer[p])
        return {"question": f"In which city are the headquarters of the organisation that {self.person(p)} joined?",
                "answer": self.city(int(self.org_city[org])), "bridge": self.org(org),
                "supporting_ids": [self.passage_id(3, p, 1), self.passage_id(2, org, 0)]}

    def _q_university_year(self, p: int) -> dict[str, object]:
        uni = int(self.university[p])
        return {"question": f"In what year was the university where {self.person(p)} studied founded?",
                "answer": str(int(self.org_year[uni])), "bridge": self.org(uni),
                "supporting_ids": [self.passage_id(3, p, 1), self.passage_id(2, uni, 0)]}

    def _q_spouse_birthplace(self, p: int) -> dict[str, object] | None:
        spouse = int(self.spouse[p])
        if spouse < 0:
            return None
        return {"question": f"In which city was the spouse of {self.person(p)} born?",
                "answer": self.city(int(self.birth_city[spouse])), "bridge": self.person(spouse),
                "supporting_ids": [self.passage_id(3, p, 0), self.passage_id(3, spouse, 0)]}


def write_corpus(corpus: ScaleCorpus, out: Path, questions: int) -> list[Path]:
    """JSON Lines shards of SHARD_PASSAGES passages and questions.jsonl; returns the shard paths."""
    out.mkdir(parents=True, exist_ok=True)
    shards: list[Path] = []
    handle = None
    for i, passage in enumerate(corpus.passages()):
        if i % SHARD_PASSAGES == 0:
            if handle is not None:
                handle.close()
            shards.append(out / f"corpus-{i // SHARD_PASSAGES:04d}.jsonl")
            handle = shards[-1].open("w", encoding="utf-8")
        assert handle is not None
        handle.write(json.dumps(passage) + "\n")
    if handle is not None:
        handle.close()
    with (out / "questions.jsonl").open("w", encoding="utf-8") as f:
        for q in corpus.questions(questions):
            f.write(json.dumps(q) + "\n")
    return shards


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    shards = write_corpus(ScaleCorpus(args.passages, args.seed), args.out, args.questions)
    print(f"wrote {args.passages} passages in {len(shards)} file(s) and {args.questions} questions to {args.out}")


if __name__ == "__main__":
    main()
