"""What a check concludes: the claim registry, the seven verdicts, the classifier that
assigns them, and the table and sentences that present them."""
