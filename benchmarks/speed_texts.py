"""The synthetic memories and questions every speed benchmark system gets (stdlib only).

Seeded, so every system and every run sees the same texts; a size's texts are a prefix of a
larger size's, so an embedding cache of 1M texts also serves 10k and 100k runs.
"""

from __future__ import annotations

import random

NAMES = [
    "Alice",
    "Bob",
    "Carmen",
    "Deepak",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kemal",
    "Lena",
    "Marco",
    "Nadia",
    "Omar",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Victor",
    "Wen",
    "Yusuf",
    "Zoe",
    "my sister",
    "my boss",
    "my neighbour",
    "the landlord",
    "our coach",
]
OBJECTS = [
    "green tea",
    "a used bike",
    "the quarterly report",
    "a birthday cake",
    "running shoes",
    "a flight to Berlin",
    "the piano lessons",
    "a new laptop",
    "sourdough bread",
    "the garden shed",
    "a jazz concert ticket",
    "the dentist appointment",
    "a vegetarian lasagna",
    "the car insurance",
    "a hiking map",
    "the wedding photos",
    "a cat named Miso",
    "the tax return",
    "a yoga mat",
    "the book club novel",
    "espresso beans",
    "a rented cabin",
    "the kids' school trip",
    "a mechanical keyboard",
    "the team offsite",
    "a dinner reservation",
    "winter tyres",
    "the apartment lease",
    "a Spanish course",
    "the marathon training plan",
]
PLACES = [
    "in Lisbon",
    "at the office",
    "near the lake",
    "at home",
    "in the old town",
    "at the gym",
    "in Kyoto",
    "at the farmers market",
    "on the train",
    "at grandma's house",
    "in the park",
    "at the airport",
    "downtown",
    "at the library",
    "in Barcelona",
    "at the clinic",
    "by the river",
    "at the cafe on 5th street",
    "in the mountains",
    "at school",
]
TIMES = [
    "yesterday",
    "last weekend",
    "this morning",
    "on Tuesday",
    "two weeks ago",
    "in March",
    "every Friday",
    "last night",
    "over the holidays",
    "after work",
]
TEMPLATES = [
    "{name} said they bought {obj} {place} {time}.",
    "I talked with {name} about {obj} {time}; we met {place}.",
    "Remember that {name} prefers {obj} and usually goes {place}.",
    "{time} {name} forgot {obj} {place}, which was annoying.",
    "User mentioned {name} is planning to get {obj} {place}.",
    "{name} recommended {obj}; I should check it out {place}.",
    "We argued with {name} about who pays for {obj} {time}.",
    "Note to self: ask {name} about {obj} before going {place}.",
    "{name} called {time} to say {obj} is ready {place}.",
    "I promised {name} I would bring {obj} {place} {time}.",
    "The user likes {obj} and wants to try it {place} with {name}.",
    "{name} lost {obj} {place} {time} and is still upset.",
]
QUESTIONS = [
    "What did {name} buy {place}?",
    "Who recommended {obj}?",
    "When did I talk with {name} about {obj}?",
    "What does {name} prefer?",
    "Where is {obj} ready?",
    "What did I promise to bring {place}?",
    "Which thing did {name} lose?",
    "What is {name} planning to get?",
]


WARM_UP = "warm up the model"


def make_texts(n: int, seed: int = 7) -> list[str]:
    """n realistic short memories: templates x names x objects x places x times, seeded, each with
    its own number. The combinations repeat (half of a million draws are repeats), and RippleMem
    keeps one memory of texts alike in words and numbers while plain Chroma keeps every copy: with
    a number each, every system holds all n."""
    rng = random.Random(seed)
    return [
        rng.choice(TEMPLATES).format(
            name=rng.choice(NAMES), obj=rng.choice(OBJECTS), place=rng.choice(PLACES), time=rng.choice(TIMES)
        )
        + f" (#{number})"
        for number in range(1, n + 1)
    ]


def make_queries(n: int, seed: int = 11) -> list[str]:
    """n questions in the same vocabulary as the memories."""
    rng = random.Random(seed)
    return [
        rng.choice(QUESTIONS).format(
            name=rng.choice(NAMES), obj=rng.choice(OBJECTS), place=rng.choice(PLACES)
        )
        for _ in range(n)
    ]
