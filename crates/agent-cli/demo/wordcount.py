"""Counts the words of a text read from standard input."""
import sys


def words(text):
    return text.split()


def main():
    text = sys.stdin.read()
    found = words(text)
    print(f"{len(found)} words")


if __name__ == "__main__":
    main()
