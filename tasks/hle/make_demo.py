"""Write tasks/hle/demo.jsonl: a few questions written for this project, two with images drawn here.

Run `python -m tasks.hle.make_demo` to regenerate; the file is committed so runs never need Pillow.
"""
from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from PIL import Image, ImageDraw


def _png_data_uri(image: Image.Image) -> str:
    buf = io.BytesIO()
    image.save(buf, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def shapes_image() -> str:
    """Three red circles and two blue squares on white."""
    im = Image.new("RGB", (120, 60), "white")
    d = ImageDraw.Draw(im)
    for x in (5, 45, 85):
        d.ellipse((x, 5, x + 25, 30), fill=(220, 30, 30))
    for x in (20, 65):
        d.rectangle((x, 35, x + 20, 55), fill=(30, 60, 220))
    return _png_data_uri(im)


def grid_image() -> str:
    """A 4 x 3 grid of cells with the cells on one diagonal filled black."""
    im = Image.new("RGB", (80, 60), "white")
    d = ImageDraw.Draw(im)
    for row in range(3):
        for col in range(4):
            box = (col * 20, row * 20, col * 20 + 19, row * 20 + 19)
            d.rectangle(box, outline="black", fill="black" if row == col else "white")
    return _png_data_uri(im)


def rows() -> list[dict]:
    def q(id_, question, answer, answer_type, category, raw_subject, rationale, image=""):
        return {"id": id_, "question": question, "image": image, "answer": answer, "answer_type": answer_type,
                "category": category, "raw_subject": raw_subject, "rationale": rationale}

    return [
        q("demo-hle-01", "What is the smallest prime number greater than 90?", "97", "exactMatch",
          "Math", "Number Theory", "91 = 7*13, 93 = 3*31, 95 = 5*19, 96 is even, 97 is prime."),
        q("demo-hle-02", "How many edges does a complete graph on 7 vertices have?", "21", "exactMatch",
          "Math", "Graph Theory", "n(n-1)/2 = 7*6/2 = 21."),
        q("demo-hle-03",
          "Which of these sorting algorithms is stable in its usual textbook form?\n"
          "A. Heapsort\nB. Quicksort\nC. Merge sort\nD. Selection sort",
          "C", "multipleChoice", "Computer Science/AI", "Algorithms",
          "Merge sort keeps equal keys in input order when it takes from the left run on ties."),
        q("demo-hle-04", "What is the SI unit of magnetic flux?", "Weber", "exactMatch",
          "Physics", "Electromagnetism", "Magnetic flux is measured in webers (Wb = V*s)."),
        q("demo-hle-05",
          "A gas at constant temperature is compressed from 6 L to 2 L. By what factor does its pressure change?\n"
          "A. 1/3\nB. 2\nC. 3\nD. 6",
          "C", "multipleChoice", "Physics", "Thermodynamics", "Boyle's law: p1 V1 = p2 V2, so p2/p1 = 6/2 = 3."),
        q("demo-hle-06", "How many chromosomes are in a typical human somatic cell?", "46", "exactMatch",
          "Biology/Medicine", "Genetics", "23 pairs."),
        q("demo-hle-07", "The image shows coloured shapes. How many red circles are there?", "3", "exactMatch",
          "Other", "Visual Counting", "Three red circles in the top row.", image=shapes_image()),
        q("demo-hle-08",
          "The image shows a grid in which some cells are filled black. How many cells are black?\n"
          "A. 2\nB. 3\nC. 4\nD. 12",
          "B", "multipleChoice", "Math", "Visual Reasoning",
          "The grid has 3 rows and 4 columns; the cells with equal row and column index are black: 3.",
          image=grid_image()),
    ]


def main() -> None:
    out = Path(__file__).with_name("demo.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for row in rows():
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
