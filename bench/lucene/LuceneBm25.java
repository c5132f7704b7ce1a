// Lucene's BM25 top-10, the baseline of bench/lucene_compare.sh: indexes a BEIR corpus with an
// analyser that produces groundkit's terms, then times the BEIR queries one at a time on one
// thread, as IndexSearcher.search(query, 10) runs them.
//
//   LuceneBm25 index CORPUS_JSONL INDEX_DIR
//   LuceneBm25 search INDEX_DIR QUERIES_JSONL QRELS_TSV WARMUP_SECONDS ROUNDS
//
// The analyser is groundkit's (groundkit-core/src/retrieval/analysis.rs) rebuilt from Lucene's
// parts: split on characters that are not letters or digits, drop tokens of 40 characters or
// more, lowercase, drop Lucene's English stop words (the list tantivy's English filter copies),
// Snowball English (Porter2) stemming. A document is its title, a blank line and its text, in
// one field indexed with term frequencies and norms (BM25 reads nothing else), and its `_id` in
// a stored keyword field. BM25 is Lucene's default similarity (k1 1.2, b 0.75). The writer uses
// a 256 MiB buffer, two indexing threads and the default merge policy, and nothing is merged
// after the last commit: the index keeps the segments Lucene chose, as groundkit's keeps
// tantivy's.
//
// A query is the disjunction of the distinct terms of its text (what groundkit searches),
// searched with IndexSearcher.search(query, 10): TopScoreDocCollector counting hits up to 1,000
// and free past that to skip documents that cannot make the top 10 (block-max WAND / MaxScore).
// The searcher has no executor, so each query runs on the calling thread. Rounds of every query
// run untimed for WARMUP_SECONDS, so that the JIT has compiled the search; then every query of
// every measured round is timed alone. Prints one JSON line:
// p50/p99 milliseconds over the measured rounds, the median seconds of a round, and nDCG@10 of
// the first measured round against the qrels.

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.StopFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.miscellaneous.LengthFilter;
import org.apache.lucene.analysis.snowball.SnowballFilter;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.util.CharTokenizer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.FSDirectory;
import org.tartarus.snowball.ext.EnglishStemmer;

public class LuceneBm25 {
  static final String BODY = "body";
  static final String ID = "id";
  static final int BATCH = 1000;

  static Analyzer analyzer() {
    return new Analyzer() {
      @Override
      protected TokenStreamComponents createComponents(String field) {
        Tokenizer source =
            new CharTokenizer() {
              @Override
              protected boolean isTokenChar(int c) {
                return Character.isLetterOrDigit(c);
              }
            };
        TokenStream stream = new LengthFilter(source, 1, 39);
        stream = new LowerCaseFilter(stream);
        stream = new StopFilter(stream, EnglishAnalyzer.ENGLISH_STOP_WORDS_SET);
        stream = new SnowballFilter(stream, new EnglishStemmer());
        return new TokenStreamComponents(source, stream);
      }
    };
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 3 && args[0].equals("index")) {
      index(Path.of(args[1]), Path.of(args[2]));
    } else if (args.length == 6 && args[0].equals("search")) {
      search(
          Path.of(args[1]),
          Path.of(args[2]),
          Path.of(args[3]),
          Double.parseDouble(args[4]),
          Integer.parseInt(args[5]));
    } else {
      System.err.println(
          "usage: LuceneBm25 index CORPUS_JSONL INDEX_DIR\n"
              + "       LuceneBm25 search INDEX_DIR QUERIES_JSONL QRELS_TSV WARMUP_SECONDS ROUNDS");
      System.exit(2);
    }
  }

  /** The string fields of one JSON object on one line. */
  static Map<String, String> fields(JsonFactory json, String line) throws IOException {
    Map<String, String> out = new HashMap<>();
    try (JsonParser parser = json.createParser(line)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("not a JSON object: " + line);
      }
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        if (parser.nextToken() == JsonToken.VALUE_STRING) {
          out.put(name, parser.getText());
        } else {
          parser.skipChildren();
        }
      }
    }
    return out;
  }

  static void index(Path corpus, Path dir) throws Exception {
    FieldType body = new FieldType();
    body.setTokenized(true);
    body.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
    body.freeze();
    IndexWriterConfig config =
        new IndexWriterConfig(analyzer())
            .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
            .setRAMBufferSizeMB(256);
    long started = System.nanoTime();
    long count = 0;
    JsonFactory json = new JsonFactory();
    try (FSDirectory directory = FSDirectory.open(dir);
        IndexWriter writer = new IndexWriter(directory, config);
        BufferedReader reader = Files.newBufferedReader(corpus, StandardCharsets.UTF_8)) {
      BlockingQueue<List<String>> batches = new ArrayBlockingQueue<>(8);
      List<String> done = List.of();
      Thread[] workers = new Thread[2];
      Exception[] failure = new Exception[1];
      for (int w = 0; w < workers.length; w++) {
        workers[w] =
            new Thread(
                () -> {
                  try {
                    for (List<String> batch = batches.take();
                        batch != done;
                        batch = batches.take()) {
                      List<Document> docs = new ArrayList<>(batch.size());
                      for (String line : batch) {
                        Map<String, String> record = fields(json, line);
                        String title = record.getOrDefault("title", "").strip();
                        String text = record.getOrDefault("text", "");
                        Document doc = new Document();
                        doc.add(new StringField(ID, record.get("_id"), Field.Store.YES));
                        doc.add(
                            new Field(BODY, title.isEmpty() ? text : title + "\n\n" + text, body));
                        docs.add(doc);
                      }
                      writer.addDocuments(docs);
                    }
                  } catch (Exception e) {
                    synchronized (failure) {
                      failure[0] = e;
                    }
                  }
                });
        workers[w].start();
      }
      List<String> batch = new ArrayList<>(BATCH);
      for (String line = reader.readLine(); line != null; line = reader.readLine()) {
        if (line.isBlank()) {
          continue;
        }
        batch.add(line);
        count++;
        if (batch.size() == BATCH) {
          batches.put(batch);
          batch = new ArrayList<>(BATCH);
        }
      }
      batches.put(batch);
      for (Thread worker : workers) {
        batches.put(done);
      }
      for (Thread worker : workers) {
        worker.join();
      }
      if (failure[0] != null) {
        throw failure[0];
      }
      writer.commit();
    }
    try (DirectoryReader reader = DirectoryReader.open(FSDirectory.open(dir))) {
      System.out.printf(
          "{\"engine\": \"lucene\", \"documents\": %d, \"indexed\": %d, \"segments\": %d,"
              + " \"seconds\": %.1f}%n",
          count, reader.numDocs(), reader.leaves().size(), (System.nanoTime() - started) / 1e9);
    }
  }

  /** The distinct analysed terms of `text`, in order. */
  static List<String> terms(Analyzer analyzer, String text) throws IOException {
    LinkedHashSet<String> out = new LinkedHashSet<>();
    try (TokenStream stream = analyzer.tokenStream(BODY, text)) {
      CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
      stream.reset();
      while (stream.incrementToken()) {
        out.add(term.toString());
      }
      stream.end();
    }
    return new ArrayList<>(out);
  }

  static Query query(List<String> terms) {
    if (terms.size() == 1) {
      return new TermQuery(new Term(BODY, terms.get(0)));
    }
    BooleanQuery.Builder builder = new BooleanQuery.Builder();
    for (String term : terms) {
      builder.add(new TermQuery(new Term(BODY, term)), BooleanClause.Occur.SHOULD);
    }
    return builder.build();
  }

  static double ndcgAt10(List<String> ranked, Map<String, Integer> judged) {
    double dcg = 0;
    for (int i = 0; i < ranked.size() && i < 10; i++) {
      dcg += judged.getOrDefault(ranked.get(i), 0) / (Math.log(i + 2) / Math.log(2));
    }
    int[] ideal =
        judged.values().stream().filter(g -> g > 0).sorted((a, b) -> b - a).mapToInt(g -> g)
            .toArray();
    double idcg = 0;
    for (int i = 0; i < ideal.length && i < 10; i++) {
      idcg += ideal[i] / (Math.log(i + 2) / Math.log(2));
    }
    return idcg == 0 ? 0 : dcg / idcg;
  }

  static void search(Path dir, Path queriesFile, Path qrelsFile, double warmup, int rounds)
      throws Exception {
    Analyzer analyzer = analyzer();
    JsonFactory json = new JsonFactory();
    List<String> ids = new ArrayList<>();
    List<Query> queries = new ArrayList<>();
    for (String line : Files.readAllLines(queriesFile, StandardCharsets.UTF_8)) {
      if (line.isBlank()) {
        continue;
      }
      Map<String, String> record = fields(json, line);
      List<String> terms = terms(analyzer, record.getOrDefault("text", ""));
      if (!terms.isEmpty()) {
        ids.add(record.get("_id"));
        queries.add(query(terms));
      }
    }
    Map<String, Map<String, Integer>> qrels = new HashMap<>();
    for (String line : Files.readAllLines(qrelsFile, StandardCharsets.UTF_8)) {
      String[] cols = line.split("\t");
      if (cols.length < 3 || cols[0].equals("query-id")) {
        continue;
      }
      qrels.computeIfAbsent(cols[0], k -> new HashMap<>()).put(cols[1], Integer.parseInt(cols[2]));
    }
    try (DirectoryReader reader = DirectoryReader.open(FSDirectory.open(dir))) {
      IndexSearcher searcher = new IndexSearcher(reader);
      TopDocs[] first = new TopDocs[queries.size()];
      double[] ms = new double[queries.size() * rounds];
      double[] roundSeconds = new double[rounds];
      long checksum = 0;
      int warmupRounds = 0;
      for (long start = System.nanoTime(); System.nanoTime() - start < warmup * 1e9; ) {
        for (Query query : queries) {
          checksum += searcher.search(query, 10).scoreDocs.length;
        }
        warmupRounds++;
      }
      for (int round = 0; round < rounds; round++) {
        long roundStart = System.nanoTime();
        for (int q = 0; q < queries.size(); q++) {
          long start = System.nanoTime();
          TopDocs top = searcher.search(queries.get(q), 10);
          long elapsed = System.nanoTime() - start;
          checksum += top.scoreDocs.length;
          ms[round * queries.size() + q] = elapsed / 1e6;
          if (round == 0) {
            first[q] = top;
          }
        }
        roundSeconds[round] = (System.nanoTime() - roundStart) / 1e9;
      }
      double ndcg = 0;
      int judged = 0;
      for (int q = 0; q < queries.size(); q++) {
        Map<String, Integer> grades = qrels.get(ids.get(q));
        if (grades == null) {
          continue;
        }
        List<String> ranked = new ArrayList<>();
        for (ScoreDoc hit : first[q].scoreDocs) {
          ranked.add(searcher.storedFields().document(hit.doc).get(ID));
        }
        ndcg += ndcgAt10(ranked, grades);
        judged++;
      }
      Arrays.sort(ms);
      Arrays.sort(roundSeconds);
      System.out.printf(
          "{\"engine\": \"lucene\", \"documents\": %d, \"segments\": %d, \"queries\": %d,"
              + " \"warmup_rounds\": %d, \"rounds\": %d, \"round_seconds_median\": %.4f,"
              + " \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"ndcg_at_10\": %.4f,"
              + " \"judged_queries\": %d, \"hits_checksum\": %d}%n",
          reader.numDocs(),
          reader.leaves().size(),
          queries.size(),
          warmupRounds,
          rounds,
          roundSeconds[rounds / 2],
          ms[ms.length / 2],
          ms[ms.length * 99 / 100],
          judged == 0 ? 0 : ndcg / judged,
          judged,
          checksum);
    }
  }
}
