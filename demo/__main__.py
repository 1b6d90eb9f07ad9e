"""`python -m demo`: the quickstart demo."""

from demo.run import main

if __name__ == "__main__":
    main()
