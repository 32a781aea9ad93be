"""The methods the test plugins' embedders share (their sources are strings installed as
packages of their own, see ``install_test_plugin``): a token count of words, and a unit
vector of the text's words hashed into ``self.dim`` buckets (deterministic, model-free)."""

#: Methods of a test embedder class with ``dim`` set; its module imports numpy as np and zlib.
WORD_HASH_METHODS = '''
    def count_tokens(self, texts):
        return [len(t.split()) for t in texts]

    def _one(self, text):
        v = np.zeros(self.dim, dtype=np.float32)
        for w in text.lower().split():
            v[zlib.crc32(w.encode()) % self.dim] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else np.eye(self.dim, dtype=np.float32)[0]
'''
