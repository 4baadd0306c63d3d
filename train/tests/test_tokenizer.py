"""The tiny policy's tokenizer: lossless text, magnitude tokens, merged
key=value fields, and the lossy "fields" prompt encoding.

    /usr/bin/python3 -m unittest discover -s train/tests -v
"""

from __future__ import annotations

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from svtrain.tokenizer import Tokenizer  # noqa: E402

RECORD = ("ts=2024-03-08T%02d:05:%02dZ device=%s direction=outbound\n"
          "proto=tcp src=10.3.%d.243:%d dst=34.123.92.91:445 orig_bytes=%d failed_auth=%d interval_cv=0.%02d")


def records(n: int) -> list[str]:
    # orig_bytes of row i has 4 + i % 8 digits and is unique
    return [RECORD % (3 + i % 2, i, ("laptop", "server")[i % 2], i, 40000 + 13 * i, 10 ** (3 + i % 8) + 7 * i, i % 3, i % 97)
            for i in range(n)]


class TokenizerTest(unittest.TestCase):
    def setUp(self):
        self.texts = records(60)
        self.tok = Tokenizer.fit(self.texts, prompts=self.texts)
        self.fields = Tokenizer.fit(self.texts, prompts=self.texts, prompt_mode="fields")

    def names(self, tok, text, prompt=True):
        ids = tok.encode_prompt(text) if prompt else tok.encode(text)
        return [tok.vocab[i] for i in ids]

    def test_text_round_trips(self):
        for t in self.texts + ["odd ~ text 12345678901234567890123 x=y=z", '{"label": "Benign", "confidence": 0.93}']:
            self.assertEqual(self.tok.decode(self.tok.encode(t)), t)

    def test_frequent_field_is_one_token(self):
        self.assertIn(" direction=outbound", self.names(self.tok, self.texts[0]))
        self.assertIn(" failed_auth=1", self.names(self.tok, self.texts[1]))

    def test_rare_number_gets_its_keys_magnitude(self):
        names = self.names(self.tok, self.texts[4])  # orig_bytes has 8 digits
        i = names.index(" orig_bytes=<n8>")
        self.assertEqual(names[i + 1: i + 9], list(str(10 ** 7 + 28)))
        self.assertEqual(self.tok.decode(self.tok.encode(self.texts[4])), self.texts[4])

    def test_fields_mode_keeps_what_the_record_states(self):
        names = self.names(self.fields, self.texts[4])
        self.assertIn(" orig_bytes=<n8>", names)
        self.assertIn("T03", names)
        self.assertIn(" device=laptop", names)
        self.assertIn(" failed_auth=1", names)
        # no digits of addresses, ports or the byte count
        self.assertFalse([n for n in names if n.strip().isdigit() or n in ".:"], names)
        # answers stay lossless in either mode
        ans = '{"label": "Malicious", "confidence": 0.9}'
        self.assertEqual(self.fields.decode(self.fields.encode(ans)), ans)

    def test_save_load_keeps_the_prompt_mode(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "tok.json")
            self.fields.save(p)
            back = Tokenizer.load(p)
        self.assertEqual(back.prompt_mode, "fields")
        self.assertEqual(back.encode_prompt(self.texts[7]), self.fields.encode_prompt(self.texts[7]))

    def test_unknown_prompt_mode_is_refused(self):
        with self.assertRaises(ValueError):
            Tokenizer(self.tok.vocab, prompt_mode="bytes")


if __name__ == "__main__":
    unittest.main()
