"""Stance experiments of issue 12, two of which did not ship; this script reproduces their figures.

    python scripts/stance_experiments.py comparative-cross [--splits 1]  # about 30 min per split: a cross-encoder
    python scripts/stance_experiments.py argq-init [--splits 1]   # about 30 min per split on 2 cores
    python scripts/stance_experiments.py query-cosines            # about 2 min
    python scripts/stance_experiments.py neutral-proxy            # about 2 min
    python scripts/stance_experiments.py ukp-sides [--model PATH] [--cross PATH]  # about 3 min: debate posts
    python scripts/stance_experiments.py controversial-sets --out DIR  # about 5 min
    python scripts/stance_experiments.py stated [--cross PATH]    # about 6 min: args.me's stated stances
    python scripts/stance_experiments.py stated-run --out DIR     # the same through the whole pipeline
    python scripts/stance_experiments.py fnc1 [--model PATH]      # FNC-1 test: claims against news articles
    python scripts/stance_experiments.py fnc1-neutral --out DIR   # about 15 min cold: NEU learnt from FNC-1 too
    python scripts/stance_experiments.py stemmed-mentions         # about 4 min: object mentions by word stems
    python scripts/stance_experiments.py relevance-no             # about 4 min: the relevance score as NO evidence
    python scripts/stance_experiments.py targets-dev --out DIR    # about 8 min: learning subject phrases
    python scripts/stance_experiments.py long-texts               # about 3 min: reading long texts in windows
    python scripts/stance_experiments.py stated-debates [--heads]  # about 6 min: conclusions heard from their debates
    python scripts/stance_experiments.py object-embeddings        # about 4 min: the objects' names embedded
    python scripts/stance_experiments.py neural-side              # about 12 min: a MiniLM side model
    python scripts/stance_experiments.py cross-sides              # about 4 min: the cross-encoder's sides as columns
    python scripts/stance_experiments.py ukp-finetune             # about 7 min: fine-tuning on debate posts
    python scripts/stance_experiments.py consensus --out DIR      # about 1 min: a topic's passages lean together
    python scripts/stance_experiments.py debate-turns --out DIR   # about 2 min: a post hears its debate's turns
    python scripts/stance_experiments.py post-readings            # about 4 min: how to read a long debate post
    python scripts/stance_experiments.py ukp-finetune-all [--labels docs/data/beir-touche2020-sample-stance.tsv]
                                                                  # about 8 min: fine-tuned on every debate post
    python scripts/stance_experiments.py debate-titles [--labels docs/data/beir-touche2020-sample-stance.tsv]
                                                                  # about 5 min: a debate's title left unread
    python scripts/stance_experiments.py title-route              # about 1 min: a post read toward its title
    python scripts/stance_experiments.py label-biases             # about 6 min: per-label offsets for macro-F1
    python scripts/stance_experiments.py object-sentiment         # about 15 min: sentiment toward each object
                                                                  # (needs `pip install vaderSentiment`)
    python scripts/stance_experiments.py sidedness                # about 10 min: |first - second| columns
    python scripts/stance_experiments.py sided-data               # about 15 min: sided posts and sentences added
    python scripts/stance_experiments.py window-votes             # about 6 min: a long text's windows vote
    python scripts/stance_experiments.py antonym-swaps            # about 1 min: "worse" taught by swapping words
    python scripts/stance_experiments.py feature-groups           # about 2 min: which columns tell which label
    python scripts/stance_experiments.py clean-motions [--cross PATH]  # about 3 min: test motions none restates
    python scripts/stance_experiments.py no-objects               # about 5 min: a topic whose objects are unknown

- comparative-cross: the controversial cross-encoder's recipe for comparative stance (FIRST / SECOND / NEUTRAL /
  NO), trained on the Touché 2022 comparative QA pairs and the dev topics' stance judgements (objects' mentions
  replaced by [A] / [B], object-swapped copies), leave-topics-out over `--splits` fold splits, against the head and
  the mean of both. Split of seed 13: cross-encoder 0.383, head of the time 0.447, mean 0.391; not shipped.
- argq-init: the comparative cross-encoder starts from the shipped controversial one (pre-trained on IBM-ArgQ),
  reads ("A is better than B", passage) with the real object names, and starts its FIRST / SECOND rows from the
  PRO / CON rows. Recipe fixed beforehand: the controversial model's 3 layers, 256 word pieces, 3 epochs, lr 1e-4.
  Leave-topics-out dev macro-F1 on the fold split of seed 13: cross-encoder 0.379; the cross-encoder deciding only
  FIRST vs. SECOND under the head: 0.337. It does not tell the sides apart. (Against the head of the time, title
  cosine only: 0.447, mean of both 0.453; the script compares with the head as shipped now.)
- query-cosines: the comparative head sees the passage's cosine with the topic's description-based queries
  (title + description, description, narrative; `app.relevance.topic_queries`), since NO is nearly "not relevant"
  in the dev judgements. Shipped: 5 splits 0.417 +- 0.019, without them 0.405 +- 0.021 (better on every split),
  also without the side-tie rule 0.400 +- 0.026.
- neutral-proxy: the only NEU-like labels are the comparative ones. Reading comparative passages as controversial
  stance toward the claim "A is better than B" (FIRST -> PRO, SECOND -> CON, NEUTRAL -> NEU, NO -> NO), the
  controversial head and cross-encoder score near chance (dev macro-F1 0.16), so a NEU rule fitted there says
  nothing about controversial topics; the margin rule stays.
- ukp-sides (issue 20's dev check): UKPConvArg1's debate-portal posts (createdebate), whose file name is the side
  they argue, labelled by `StanceModel.predict` as a run labels them (`--model`: a stance.npz, default the shipped
  one): 9 yes/no debates as controversial topics (PRO / CON macro-F1 with the heads alone and with the
  cross-encoder reading every post), 7 "X or Y" debates as comparative topics (FIRST / SECOND macro-F1). The
  question and side of each file are the table UKP_DEBATES, written by reading the file names and posts.
- controversial-sets (issue 20): the controversial head (and, with VAST, the neutral head) trained with ArgKP alone,
  VAST alone and both beside IBM Claim Stance and Perspectrum (`app.training.stance.controversial_head`), each
  set's test figures; writes each variant as DIR/stance-<sets>.npz (the shipped comparative head) for ukp-sides.
- stated: an args.me argument states its stance toward its conclusion; `StanceModel.orient` reads the conclusion's
  side of the question and turns the stated stance with it (see `stated_stances`). Each figure with the motion as
  written / asked as Touché asks its topics (`as_question`: "Should we X?"), as a run sees them. Orientation alone,
  PRO / CON macro-F1, cross-encoder (heads): IBM Claim Stance test claims 0.668 / 0.684 (0.584 / 0.575), ArgKP-2021
  test key points 0.909 / 0.878 (0.700 / 0.633). ArgKP-2021 test as args.me (a drawn key point as conclusion), PRO /
  CON macro-F1 of the arguments' stance, with the stated stance: heads 0.795 / 0.778, cross-encoder on the top 10
  (the default run) 0.906 / 0.894, on every text 0.956 / 0.938; the text alone 0.639 / 0.646, 0.662 / 0.666, 0.877 /
  0.859. The cross-encoder trained on motions as written only (before QUESTION_SHARE): orientation 0.671 / 0.676
  and 0.939 / 0.846, default run 0.915 / 0.885, every text 0.956 / 0.927. Each conclusion heard from the arguments
  read that state a stance toward it (`StanceModel.stated_sides`, shipped since): top 10 0.954 / 0.960, every text
  0.979 / 0.974; heads, hearing the debates by their own readings (shipped later), 0.979 / 0.974.
- stated-run: the same on `make bench`'s args-me input (all of ArgKP-2021, so in-sample for both models but for
  its 3 test motions, reported apart as argkp_test_motions), the topics' titles as written ("motion") and asked as
  questions ("question"). Whole run, cross-encoder on the top 10: 0.898 / 0.908 (test motions 0.925 / 0.917); the
  cross-encoder trained on motions as written only: 0.915 / 0.893 (0.934 / 0.903). On the whole reranked head,
  each argument read without its conclusion (the default run since): 0.922 / 0.932 (0.934 / 0.929); the reranked
  head of the test motions, asked, 0.982 (read with the conclusion: 0.881); each conclusion also heard from the
  arguments that state a stance toward it (`StanceModel.stated_sides`, the default run since): 1.0 everywhere, as
  each key point here is the conclusion of about 30 arguments (top 10 only: 0.951 / 0.952). The heads alone, each
  conclusion heard from their readings (shipped later): whole run 0.690 -> 0.803 / 0.680 -> 0.792, the reranked
  head of the test motions 0.956 / 0.956.
- stated-debates: args.me-like debates of about 3 texts (1 + Poisson(2)), each with one conclusion, through
  `StanceModel.predict`: the first 100 (UKPConvArg1: 30) texts of a topic read by the cross-encoder, the rest
  labelled by their stated stance alone. PRO / CON macro-F1 over
  all, conclusions heard from their debates / read alone: ArgKP-2021 test motions asked, other arguments as
  conclusions 0.941 / 0.929, key points as conclusions 0.968 / 0.899; UKPConvArg1's yes/no debate posts with
  conclusions written by hand (UKP_CONCLUSIONS) 0.944 / 0.766. With --heads the run reads with the heads alone
  and hears the debates by their readings: 0.778 / 0.727, 0.956 / 0.717, 0.808 / 0.729.
- fnc1: FNC-1's test split (25,413 headline-article pairs) as controversial stance, each article read by its
  passage closest to the headline; 4-class macro-F1 with agree / disagree / discuss / unrelated as PRO / CON / NEU /
  NO. Heads on every pair 0.322 (per label 0.305 / 0.106 / 0.001 / 0.878); on the 8,358 pairs of 300 drawn
  headlines heads 0.322, cross-encoder 0.334 (0.270 / 0.199 / 0.000 / 0.868), the cross-encoder 700 s against the
  heads' 0.3 s. News discussing a claim is almost never called NEU: the neutral head learned VAST's comments, not
  reporting. FNC-1 is not in the shipped models' training; this measures them on long news texts.
- fnc1-neutral (not shipped): the neutral head trained on VAST + FNC-1's related train pairs (10,535; discuss as NEU,
  agree / disagree as SIDED), a fifth of the train articles held out. PRO / CON / NEU macro-F1, VAST-only head (as
  shipped) -> with FNC-1: held-out FNC-1 articles 0.160 -> 0.484 (NEU 0.013 -> 0.846), VAST test 0.621 -> 0.562;
  `fnc1 --model DIR/stance-vast-fnc1.npz`, 4-class on FNC-1 test (heads) 0.322 -> 0.435. On the dev check of
  debate posts (`ukp-sides --model`, 9 yes/no debates, PRO / CON judged) it calls more posts NEU (sided 0.922 ->
  0.842): heads 0.520 -> 0.502, cross-encoder reading every post 0.674 -> 0.643. Debate-style stance is what the
  controversial topics are judged on, so the shipped neutral head stays VAST's.
- stemmed-mentions (not shipped): where an object's name is not in a passage as a phrase (`app.stance.find_mentions`),
  its words that the other object lacks are looked for by their Snowball stem ("baked" for "bake", "plastic
  containers" for "Plastic pots"); 126 (119 by first words) of 802 dev passage-object pairs gain mentions. The head as
  shipped (side model and all), 5 fold splits: literal 0.459 +- 0.025, every such word 0.441 +- 0.022, its first
  word 0.449 +- 0.022: generic words ("food", "guy", "major") add more noise than the missed mentions add signal.
  Also on the literal head's out-of-fold probabilities, the best offsets to the sided and NEUTRAL log-probabilities
  (grid -1..1, chosen on the same folds, so optimistic): 0.461, so the errors are not the decoder's thresholds.
- object-embeddings (not shipped): the comparative head with columns from the objects' names embedded (A, B; the
  passage p), 5 fold splits against 0.459 +- 0.025 as shipped: cos(p, A) - cos(p, B) and their sum 0.453 +- 0.020
  (weighed like the side model's columns: 0.454 +- 0.011), p * (A - B) 0.428 +- 0.026, p * title query 0.424 +-
  0.013. The names' embeddings add nothing the mention features do not have.
- relevance-no (not shipped): the dev judges call 444 of the 451 non-relevant passages NO, so the relevance head's
  score (trained per fold without the fold's topics) lowers log P(NO) by w times its standardised logit, w in 0..2
  chosen on the other folds: 5 fold splits 0.462 +- 0.024 against 0.459 +- 0.025 as shipped (best w on all
  splits, optimistic: 0.2, 0.468); the head's own query cosines already carry most of it, so the run keeps its
  stance stage free of the relevance scores.
- targets-dev (not shipped): the cross-encoder also learns IBM Claim Stance train's target phrases
  (`load_ibm_targets`) of 15 of its 25 motions; the other 10 motions' 366 phrases, asked: 0.509 (shipped) -> 0.518,
  ArgQ dev asked 0.885 -> 0.879. The run orients such phrases by `app.stance.subject_sentiment` instead.
- long-texts (not shipped): VAST train's 5,748 PRO / CON comments over 90 words, first 128 word pieces 0.540, first
  256 0.540, mean log-odds over up to 3 windows of 90 words 0.551 for 2.2 times the pairs.
- neural-side (not shipped): the side model as a MiniLM cross-encoder reading the masked sentence (NEURAL_SIDE: 3
  layers, 3 epochs on CompSent-19's train split and its object-swapped copies, 2 min). CompSent-19 test macro-F1
  0.642 (n-gram regression, FIRST / SECOND / NONE 0.663 / 0.363 / 0.898) -> 0.754 (0.782 / 0.562 / 0.917), but the
  comparative head's dev CV 0.459 +- 0.025 -> 0.454 +- 0.024, lower on 4 of 5 splits: 269 of the 401 dev passages
  have a sentence naming both objects, only 66 of them judged FIRST or SECOND; the sides the head misses are in
  passages that argue about one object.
- cross-sides (not shipped): the shipped controversial cross-encoder's PRO-vs-CON log-odds of each passage toward
  "Is A better than B?" and "Is B better than A?" (2,714 pairs read) as two more columns of the comparative head,
  5 fold splits: 0.459 +- 0.025 (as heavy as the other columns) and 0.450 +- 0.020 (as heavy as the side model's),
  against 0.459 +- 0.025 shipped. Reading a passage toward a comparison as a claim adds no side.
- ukp-finetune (not shipped): the shipped stance cross-encoder fine-tuned (UKP_FINETUNE, about 30 s a fold) on
  UKPConvArg1's debate posts, each yes/no debate held out in turn: trained on the other 8 yes/no debates and the 7
  "X or Y" debates read toward "Is X better than Y?" and the reverse. Its own PRO / CON reading of the held-out
  posts 0.685 -> 0.699 (403 -> 411 of 588 right; 4 debates up by 1-7 posts, 4 down by 1-4, one even), ArgQ dev
  asked 0.886 -> 0.884-0.892 over the folds. Eight posts, split evenly across debates, is no evidence of a gain,
  and training on these posts would spend the only debate-portal check, so the shipped model stays as it is.
- consensus (not shipped): 85 of the 110 sided dev passages in tira-input take their topic's majority side, so each
  passage's FIRST-vs-SECOND log-odds move toward the other passages of its topic's reranked head (`with_consensus`),
  each fold's topics labelled by a head trained without them, as a run labels them (400 judged passages): 5 fold
  splits 0.452 +- 0.024 without, 0.457 to 0.467 at strengths 0.5 to 4 (0.467 +- 0.021 at 2, lower on 1 split), the
  strength chosen on each fold's other topics 0.457 +- 0.023. At 2 the labels change on 158 passages over the 5
  splits, 51 right before and 53 after, and 27 topic folds gain right passages where 34 lose them: the macro-F1 rises
  by moving NEUTRAL and NO passages to the sides, not by telling the sides apart.
- debate-titles (shipped, `app.debates`): args.me without a stated stance joins each argument with its debate's
  conclusion (TIREx: premises + conclusion, "closing"; BEIR and passage files: conclusion + premises, "opening").
  The stated-debates draws so joined under args.me ids, the cross-encoder reading a topic's first 100 (UKP: 30)
  texts joined -> without the words their debate shares -> the argument alone, PRO / CON macro-F1: ArgKP-2021
  test, other arguments as conclusions, closing 0.774 -> 0.861 -> 0.864, opening 0.737 -> 0.849 -> 0.863; key
  points as conclusions 0.738 -> 0.858 -> 0.865, 0.664 -> 0.849 -> 0.859; UKPConvArg1 posts 0.667 -> 0.705 ->
  0.701, 0.667 -> 0.709 -> 0.701. With --labels, the 229 real args.me texts of BEIR's webis-touche2020 sample
  (title + post), labelled PRO / CON / NONE toward their query by a helper session of this project reading each
  text (not Touché's judgements, which hold no stance here): of the 69 sided texts with a sibling in the sample,
  0.695 -> 0.710 (7 labels right only after, 6 only before: real posts refer to their title, "I stand in Pro
  position", where drawn conclusions say nothing).
- ukp-finetune-all (not shipped): the shipped cross-encoder fine-tuned on all 1,052 UKPConvArg1 posts (the "X or Y"
  ones both ways), checked on debate posts it never saw, the 178 sided real args.me texts of BEIR's sample (--labels),
  and on ArgQ dev asked: 0.663 -> 0.663 / 0.675 / 0.679 / 0.675 over seeds 13, 1, 2, 3; ArgQ dev 0.886 -> 0.884 to
  0.891. With seed 13 the test sets the shipped model must keep (as written / asked) move: ArgQ 0.866 / 0.865 ->
  0.862 / 0.860, Perspectrum 0.752 / 0.738 -> 0.736 / 0.740, IBM Claim Stance 0.669 / 0.683 -> 0.673 / 0.683,
  ArgKP 0.897 / 0.878 -> 0.910 / 0.900, VAST sided 0.520 -> 0.520 / 0.518. At most 3 more of 178 real posts right,
  within a seed's reach, for a loss on two of the sets it must keep.
- post-readings (not adopted): how the cross-encoder reads a debate post, its own PRO / CON accuracy on the 178 sided
  real args.me texts of BEIR's sample (100 over 120 words) / UKPConvArg1's 588 yes/no posts: first 128 word pieces
  (shipped) 0.669 / 0.687, first 256 0.657 / 0.690, mean log-odds of the first 2 or 3 windows of 60 words 0.697 or
  0.674 / 0.689 or 0.690, of 90 words 0.635 or 0.629 / 0.690, without the sentences that report the other side
  ("My opponent claims", quotes) 0.674 / 0.684. No reading is better on both sets and across window sizes.
- debate-turns (shipped, `app.debates.heard_from_turns`): args.me 1.0 ids number a debate's posts, and debaters
  take turns. Of the 73 pairs of sided posts of one debate in BEIR's sample, 39 of 45 of other parity take opposite
  sides toward the query and 20 of 28 of the same parity the same side. Each post read hears the others read of its
  debate (turned for the other parity) at a weight: PRO / CON macro-F1 over the 178 sided texts / the 69 with a
  sibling in the sample at 0, 0.25, 0.5, 1, 2: 0.663, 0.695, 0.695, 0.690, 0.674 / 0.710, 0.795, 0.795, 0.781,
  0.739. Shipped at 0.5, chosen here, so these figures are not held out. The whole pipeline on the texts as a
  passages.jsonl.gz input (`beir_sample_run`), each text read whole / without its debate's title / also hearing its
  debate's turns (shipped): 0.653 / 0.659 / 0.692 (117 / 118 / 124 of 178 right); at --rerank-depth 3, where most
  texts lie below the rerank depth and their debate's turns also label them, 0.537 / 0.531 / 0.609 (80 / 79 / 97
  right, Q0 61 / 61 / 39).
- object-sentiment (not shipped): the sides the head misses are in passages that argue about one object, so each
  object gets the sentiment of the sentences naming it and not the other, by VADER (Hutto and Gilbert, ICWSM 2014;
  `vaderSentiment`, MIT; a lexicon of 7,500 words with negation and intensifier rules, 14 us a sentence): as
  columns of the comparative head, "sums" log1p of each object's positive and negative compound sums (4 columns),
  "diff" tanh of the objects' net sentiment difference and sum, "mean" the same of their mean per sentence; each as
  heavy as the other columns (1) or as the side model's (SIDE_EMPHASIS). 5 fold splits against 0.459 +- 0.025 as
  shipped (0.471, 0.498, 0.450, 0.423, 0.456): sums 0.465 +- 0.023 (0.479, 0.499, 0.458, 0.430, 0.458: higher on
  every split, by 0.001 to 0.008; rerun on 2026-11-28) / 0.450 +- 0.027, diff 0.457 +- 0.030 / 0.447 +- 0.024,
  mean 0.451 +- 0.027 / 0.439 +- 0.026. The best of six variants, +0.006, chosen on these splits, for a new
  dependency: not shipped.
  VADER reads social-media sentiment ("slow" and "expensive" are neutral to it).
- sidedness (not shipped): out of fold (split of seed 13) the head confuses the sides little (of the 110 sided
  dev passages it calls 46 sided, 40 of them on the right side) but calls 64 NEUTRAL or NO. The head is linear
  and trained on object-swapped copies, so it cannot form |first - second| of an object feature, which says how
  sided a passage is whichever side it takes. Those of the 6 paired lexical and side-model features as columns, as
  heavy as the others / as the side model's: 0.459 +- 0.029 / 0.436 +- 0.023; the side model's 2 alone 0.459 +-
  0.023 / 0.454 +- 0.022, against 0.459 +- 0.025 as shipped.
- title-route (not shipped): a stanceless debate post read toward its debate's title (the words its debate shares,
  `app.debates.shared_words`) instead of toward the query, turned by the title's orientation toward the query
  (`StanceModel.orient`), as args.me's stated stance is. On the 69 sided texts of BEIR's sample with a sibling (the
  only ones whose title the run can find), PRO / CON macro-F1: the post toward the query (shipped) 0.710 (49 right),
  by the title's route 0.637 (44), the sum at route weight 0.25 / 0.5 / 1 / 2: 0.666 / 0.695 / 0.666 / 0.666.
- sided-data (not shipped): the head's weak labels are the sides, and only 110 dev passages are sided, so more
  sided training examples beside the QA pairs (and their object-swapped copies): UKPConvArg1's 464 "X or Y" debate
  posts (FIRST / SECOND by their file's side; the dev check ukp-sides then is in sample) at weight 0.3 / 1 / 3, or
  CompSent-19 train's 1,565 BETTER / WORSE sentences (as FIRST / SECOND, asked "Which is better, A or B?") at 0.1:
  0.456 +- 0.022 / 0.448 +- 0.024 / 0.432 +- 0.019; 0.452 +- 0.024, against 0.459 +- 0.025 as shipped.
- window-votes (not adopted): the cross-encoder reads the first 128 word pieces, question included (about 90 words
  of text), so an argument after a 120-word opening goes unread (a helper's hand-made passages: 0 of 8 PRO / CON
  twins told apart at 200 words). Every window of a text read (`app.passages.windows` of 60 words, up to 5; of 90,
  up to 3 and up to 8), the text's reading their mean log-odds or the most confident window's, against the first
  128 pieces; its own PRO / CON accuracy on BEIR's 178 sided args.me texts (median 155 words) / UKPConvArg1's 588
  yes/no posts (median 39) / 1,500 of VAST train's PRO / CON comments over 90 words (median 130; seed 13): first 128
  pieces 0.669 / 0.687 / 0.529; 60 x 5 mean 0.646 / 0.690 / 0.555, most confident 0.657 / 0.687 / 0.562; 90 x 3
  mean 0.629 / 0.690 / 0.554, most confident 0.629 / 0.690 / 0.549 (90 x 8 as 90 x 3 but on BEIR's sample, 0.618).
  News-like comments gain 0.03 for 2-3 times the reading; debate posts, what args.me holds, lose 0.01-0.05: their
  later sentences rebut and concede.
- antonym-swaps (not adopted): the side model reads "objectfirst is much worse than objectsecond" as FIRST 0.45 /
  SECOND 0.54 (CompSent-19's WORSE sentences mostly say "better" of the second object). Each BETTER / WORSE training
  sentence holding a comparative of a list is copied with every such word swapped for its antonym (better / worse,
  faster / slower, more / less, ...: 18 pairs; or better / worse, best / worst, superior / inferior; or better /
  worse alone) and its label flipped. The probe then reads SECOND 0.88, but CompSent-19 train's 5-fold macro-F1 (the
  side model's selection figure) falls: 0.641 without, 0.606 / 0.630 / 0.626 with (held-out test with 18 pairs
  0.643 -> 0.603): the swapped sentences are not how real comparisons are written.
- clean-motions: the cross-encoder (`--cross`, default the shipped one) on the reported test pairs whose motion no
  training motion of the recipe before 2026-11-28 restates (cosine >= 0.8 to every motion of ArgQ train, IBM Claim
  Stance train, Perspectrum train/dev and ArgKP train+dev; ArgQ test 4,926 of 6,315 pairs, IBM 1,042 of 1,355,
  Perspectrum 1,038 of 1,204, ArgKP 443 of 723): the same pairs for a model trained before and after restated
  motions were dropped from every training source. Before (`git show 93662e3:app/models/stance-cross-controversial.npz`)
  / after, macro-F1 as written, asked: ArgQ test 0.872, 0.871 / 0.859, 0.867; IBM Claim Stance 0.661, 0.673 / 0.665,
  0.677; Perspectrum 0.731, 0.717 / 0.722, 0.719; ArgKP 0.865, 0.830 / 0.872, 0.865.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

from app import debates
from app.passages import sentence_spans
from app.records import COMPARATIVE_LABELS, Document, Topic
from app.relevance import EMBEDDING_DIM, QUERY_NAMES
from app.stance import FEATURE_NAMES as LEXICAL_FEATURE_NAMES
from app.stance import (StanceModel, _with_side, average_orders, comparative_lexical, controversial_features,
                        decode_comparative, find_mentions, subject_sentiment, symmetric_probabilities,
                        topic_polarity)
from app.stance_cross import StanceCrossEncoder
from app.stance_side import FEATURE_NAMES as SIDE_FEATURE_NAMES
from app.stance_side import SideModel, within
from app.training import common
from app.training.stance import (BASELINE_C, BASELINE_DEV_WEIGHT, COMPARATIVE_C, CONTROVERSIAL_C, DEV_WEIGHT, FOLDS,
                                 SIDE_C, SIDE_EMPHASIS, SPLITS, SWAPPED, ComparativeExample, ControversialExample,
                                 EmbeddingCache, without_topics, comparative_matrix, cross_validate_dev, fit_head,
                                 load_argq, load_compsent, load_dev_passages, load_ibm_claims, load_ibm_targets,
                                 load_perspectrum, load_qa_pairs, load_vast, out_of_fold_dev, predict_labels,
                                 queries_of, side_labels, sided_or_neutral, swap, train_comparative, train_neutral,
                                 train_side)
from app.training.stance_cross import Recipe, fit, lower_states, predict_states, question_or_motion

log = logging.getLogger(__name__)
SEED = 13
LABELS = list(COMPARATIVE_LABELS)
ARGQ_INIT = Recipe(layers=3, max_length=256, epochs=3, lr=1e-4)


# Comparative: 2 epochs at 1e-4 and 128 word pieces under-fitted (loss 1.25 -> 1.09, dev CV 0.33 on one split), so
# more epochs, a higher rate and the whole passage were fixed before measuring this recipe. On the fold split of
# seed 13: macro-F1 0.383 (head 0.447, mean of both 0.391), about 340 s of training per fold. Not shipped.
COMPARATIVE = Recipe(layers=2, max_length=256, epochs=5, lr=2e-4)


def mark(text: str, spans_first: list[tuple[int, int]], spans_second: list[tuple[int, int]]) -> str:
    """Replace the first object's mentions by "[A]" and the second's by "[B]"; a span overlapping an earlier one is
    left alone."""
    spans = sorted([(s, e, "[A]") for s, e in spans_first] + [(s, e, "[B]") for s, e in spans_second])
    out, at = [], 0
    for start, end, token in spans:
        if start < at:
            continue
        out.append(text[at:start])
        out.append(token)
        at = end
    out.append(text[at:])
    return "".join(out)


def comparative_pair(example: ComparativeExample) -> tuple[str, str]:
    """(question, passage) with the first object's mentions as [A] and the second's as [B]."""
    question = mark(example.question, find_mentions(example.question, example.objects[0]),
                    find_mentions(example.question, example.objects[1]))
    return question, mark(example.text, *example.spans)


def _with_swapped(examples: list[ComparativeExample]) -> list[ComparativeExample]:
    return examples + [swap(example) for example in examples]


def _swap_average(model: StanceCrossEncoder, states, swapped_states) -> np.ndarray:
    return average_orders(predict_states(model, states), predict_states(model, swapped_states), model.labels)


def label_scores(gold: list[str], predicted: list[str], labels: list[str]) -> dict:
    """Macro-F1 and per-label F1 of predicted labels, rounded for a report."""
    return {"macro_f1": round(float(f1_score(gold, predicted, labels=labels, average="macro")), 4),
            "per_label": dict(zip(labels, np.round(f1_score(gold, predicted, labels=labels, average=None),
                                                   3).tolist()))}


def comparative_predictions(model: StanceCrossEncoder, recipe: Recipe, pair, qa, dev, embed: EmbeddingCache,
                            splits: int, seed: int):
    """Per fold split (split s uses the topic folds of seed + s, as app.training.stance does): the dev passages'
    gold labels, the cross-encoder's swap-averaged probabilities, the head's probabilities, and the training seconds
    of each fold; every passage is predicted by models trained without its topic.

    `model` restarts from its current weights in every fold; `pair` turns an example into its (question, passage)
    input. The QA pairs and the other folds' dev passages, with object-swapped copies, train each fold.
    """
    initial = {name: tensor.clone() for name, tensor in model.network.state_dict().items()}
    qa_pairs = _with_swapped(qa)
    qa_states = lower_states(model, [pair(e) for e in qa_pairs])
    dev_states = lower_states(model, [pair(e) for e in dev])
    dev_swapped = lower_states(model, [pair(swap(e)) for e in dev])
    head_features = comparative_matrix(dev, embed)
    for split in range(splits):
        gold, cross, head, seconds = [], [], [], []
        for fold in common.topic_folds([e.group for e in dev], FOLDS, seed + split):
            train = [i for i, e in enumerate(dev) if e.group not in fold]
            held = [i for i, e in enumerate(dev) if e.group in fold]
            model.network.load_state_dict(initial)
            states = qa_states + [dev_states[i] for i in train] + [dev_swapped[i] for i in train]
            labels = ([e.label for e in qa_pairs] + [dev[i].label for i in train]
                      + [SWAPPED[dev[i].label] for i in train])
            seconds.append(fit(model, states, labels, recipe, seed)["seconds"])
            cross.append(_swap_average(model, [dev_states[i] for i in held], [dev_swapped[i] for i in held]))
            fold_head = train_comparative(qa, [dev[i] for i in train], embed, BASELINE_C, BASELINE_DEV_WEIGHT,
                                          seed)
            head.append(fold_head.probabilities(head_features[held]))
            gold += [dev[i].label for i in held]
        yield gold, np.vstack(cross), np.vstack(head), seconds


def cross_validate_comparative(qa, dev, embed: EmbeddingCache, splits: int, seed: int) -> dict:
    """Dev macro-F1, leave-topics-out, of the cross-encoder, the head, and their mean probabilities, per fold split
    (the topic folds of app.training.stance: split s uses seed + s)."""
    labels = list(COMPARATIVE_LABELS)
    import torch

    torch.manual_seed(seed)
    model = StanceCrossEncoder.create(COMPARATIVE_LABELS, "comparative", COMPARATIVE.layers, COMPARATIVE.max_length)
    result = {"splits": []}
    for split, (gold, cross, head, seconds) in enumerate(
            comparative_predictions(model, COMPARATIVE, comparative_pair, qa, dev, embed, splits, seed)):
        row = {"seed": seed + split, "train_seconds": seconds}
        for name, p in (("cross", cross), ("head", head), ("mean", (cross + head) / 2)):
            row[name] = label_scores(gold, [labels[j] for j in p.argmax(1)], labels)
        log.info("split %d: %s", split, json.dumps(row))
        result["splits"].append(row)
    for name in ("cross", "head", "mean"):
        scores = [row[name]["macro_f1"] for row in result["splits"]]
        result[name] = {"mean": round(float(np.mean(scores)), 4), "sd": round(float(np.std(scores)), 4)}
    return result


def _claim(example: ComparativeExample) -> tuple[str, str]:
    return f"{example.objects[0]} is better than {example.objects[1]}", example.text


def argq_init(qa, dev, embed, splits: int) -> dict:
    """Leave-topics-out CV of the comparative cross-encoder started from the controversial one."""
    import torch

    torch.manual_seed(SEED)
    model = StanceCrossEncoder.create(COMPARATIVE_LABELS, "comparative", ARGQ_INIT.layers, ARGQ_INIT.max_length)
    source = StanceCrossEncoder.load(device="cpu")
    trained, state = source.network.state_dict(), model.network.state_dict()
    for name, parameter in model.network.named_parameters():
        if parameter.requires_grad and name.startswith("bert."):
            state[name] = trained[name].clone()
    for row, label in ((LABELS.index("FIRST"), "PRO"), (LABELS.index("SECOND"), "CON")):
        for part in ("weight", "bias"):
            state[f"head.{part}"][row] = trained[f"head.{part}"][source.labels.index(label)]
    model.network.load_state_dict(state)
    result = []
    for split, (gold, cross, head, _) in enumerate(
            comparative_predictions(model, ARGQ_INIT, _claim, qa, dev, embed, splits, SEED)):
        # head: the head as shipped now; cross_side_only: the head's P(sided), split by the cross-encoder
        side_only = head.copy()
        sided, first = head[:, :2].sum(1), cross[:, 0] / cross[:, :2].sum(1)
        side_only[:, 0], side_only[:, 1] = sided * first, sided * (1 - first)
        arms = (("cross", cross), ("head", head), ("mean", (cross + head) / 2), ("cross_side_only", side_only))
        result.append({"seed": SEED + split, **{name: label_scores(gold, [LABELS[j] for j in p.argmax(1)], LABELS)
                                                  for name, p in arms}})
        logging.info("%s", json.dumps(result[-1]))
    return {"splits": result}


def query_cosines(qa, dev, embed) -> dict:
    """The comparative head's CV over SPLITS fold splits as shipped, without the cosines of the description-based
    queries (the title's cosine kept), and also without the side-tie rule (`app.stance.decode_comparative`)."""
    extra = len(QUERY_NAMES) - 1
    result = {}
    def argmax(head, features):
        return [head.labels[i] for i in head.probabilities(features).argmax(1)]

    for name, keep, decode in (("without_query_cosines_or_side_tie", slice(0, -extra), argmax),
                               ("without_query_cosines", slice(0, -extra), predict_labels),
                               ("head", slice(None), predict_labels)):
        features, scores = comparative_matrix(dev, embed)[:, keep], []
        for split in range(SPLITS):
            gold, predicted = [], []
            for fold in common.topic_folds([e.group for e in dev], FOLDS, SEED + split):
                held = [i for i, e in enumerate(dev) if e.group in fold]
                train = qa + [e for e in dev if e.group not in fold]
                train = train + [swap(e) for e in train]
                weights = np.asarray([BASELINE_DEV_WEIGHT if e.group != "qa" else 1.0 for e in train])
                head = fit_head(comparative_matrix(train, embed)[:, keep], [e.label for e in train],
                                COMPARATIVE_LABELS, BASELINE_C, SEED, weights)
                gold += [dev[i].label for i in held]
                predicted += decode(head, features[held])
            scores.append(label_scores(gold, predicted, LABELS)["macro_f1"])
        result[name] = {"splits": scores, "mean": round(float(np.mean(scores)), 4),
                        "sd": round(float(np.std(scores)), 4)}
    return result


def neutral_proxy(qa, dev, embed) -> dict:
    """Comparative passages read as controversial stance toward "A is better than B": the shipped controversial
    path (head, cross-encoder PRO/CON, NEU margin rule) at several margins, and a NEU rule learnt on the QA pairs."""
    mapping = {"FIRST": "PRO", "SECOND": "CON", "NEUTRAL": "NEU", "NO": "NO"}
    labels, head_labels = ["PRO", "CON", "NEU", "NO"], ("PRO", "CON", "NO")
    stance, cross = StanceModel.load(device="cpu"), StanceCrossEncoder.load(device="cpu")
    sets = {}
    for name, examples in (("qa", qa), ("dev", dev)):
        claims = [_claim(e)[0] for e in examples]
        head = stance.controversial.probabilities(controversial_features(
            embed([e.text for e in examples]), embed(claims), np.asarray([topic_polarity(c) for c in claims])))
        side = cross.probabilities([_claim(e) for e in examples])
        sets[name] = (_with_side(head, head_labels, side, cross.labels), [mapping[e.label] for e in examples])

    def decode(p: np.ndarray, margin: float) -> list[str]:
        best = [head_labels[i] for i in p.argmax(1)]
        return ["NEU" if label != "NO" and abs(row[0] - row[1]) < margin else label for label, row in zip(best, p)]

    result = {name: {f"margin_{margin}": label_scores(gold, decode(p, margin), labels)
                     for margin in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6)} for name, (p, gold) in sets.items()}

    def features(p: np.ndarray) -> np.ndarray:
        return np.hstack([p, np.abs(p[:, :1] - p[:, 1:2])])

    learnt = LogisticRegression(class_weight="balanced", max_iter=2000).fit(features(sets["qa"][0]), sets["qa"][1])
    predicted = learnt.predict(features(sets["dev"][0])).tolist()
    result["dev"]["learnt_on_qa"] = label_scores(sets["dev"][1], predicted, labels)
    return result


# file-name debate: (question, compared objects or None, {file-name side: label}); yes/no debates are PRO / CON
# toward the question, "X or Y" debates FIRST / SECOND toward the objects.
UKP_DEBATES = {
    "ban-plastic-water-bottles": ("Should plastic water bottles be banned?", None,
                                  {"yes-emergencies-only": "PRO", "no-bad-for-the-economy": "CON"}),
    "gay-marriage-right-or-wrong": ("Is allowing gay marriage right?", None,
                                    {"allowing-gay-marriage-is-right": "PRO", "allowing-gay-marriage-is-wrong": "CON"}),
    "human-growth-and-development-should-parents-use-spanking-as-an-option-to-discipline-": (
        "Should parents use spanking as an option to discipline?", None, {"yes": "PRO", "no": "CON"}),
    "if-your-spouse-committed-murder-and-he-or-she-confided-in-you-would-you-turn-them-in-": (
        "If your spouse committed murder and confided in you, would you turn them in?", None,
        {"yes": "PRO", "no": "CON"}),
    "india-has-the-potential-to-lead-the-world-": ("Does India have the potential to lead the world?", None,
                                                   {"yes-for": "PRO", "no-against": "CON"}),
    "is-porn-wrong-": ("Is porn wrong?", None, {"yes-porn-is-wrong": "PRO", "no-is-is-not": "CON"}),
    "is-the-school-uniform-a-good-or-bad-idea-": ("Is the school uniform a good idea?", None,
                                                  {"good": "PRO", "bad": "CON"}),
    "should-physical-education-be-mandatory-in-schools-": ("Should physical education be mandatory in schools?",
                                                           None, {"yes-": "PRO", "no-": "CON"}),
    "william-farquhar-ought-to-be-honoured-as-the-rightful-founder-of-singapore": (
        "Ought William Farquhar to be honoured as the rightful founder of Singapore?", None,
        {"yes-of-course-": "PRO", "no-it-is-raffles-": "CON"}),
    "christianity-or-atheism-": ("Christianity or atheism?", ("christianity", "atheism"),
                                 {"christianity": "FIRST", "atheism": "SECOND"}),
    "evolution-vs-creation": ("Evolution vs. creation: which is right?", ("evolution", "creation"),
                              {"evolution": "FIRST", "creation": "SECOND"}),
    "firefox-vs-internet-explorer": ("Which is better, Firefox or Internet Explorer?", ("firefox", "internet explorer"),
                                     {"it-has-a-cute-logo-oh-and-extensions-err-add-ons": "FIRST",
                                      "there-s-more-browsers-than-the-ie-firefox-is-an-animal": "SECOND"}),
    "is-it-better-to-have-a-lousy-father-or-to-be-fatherless-": (
        "Is it better to have a lousy father or to be fatherless?", ("lousy father", "fatherless"),
        {"lousy-father": "FIRST", "fatherless": "SECOND"}),
    "personal-pursuit-or-advancing-the-common-good-": ("Personal pursuit or advancing the common good?",
                                                       ("personal pursuit", "common good"),
                                                       {"personal-pursuit": "FIRST",
                                                        "advancing-the-common-good": "SECOND"}),
    "pro-choice-vs-pro-life": ("Pro-choice or pro-life?", ("pro-choice", "pro-life"),
                               {"pro-choice": "FIRST", "pro-life": "SECOND"}),
    "tv-is-better-than-books": ("Is TV better than books?", ("TV", "books"), {"tv": "FIRST", "books": "SECOND"}),
}
UKP_FOLDER = "argument-quality/ukpconvarg1/UKPConvArg1-Ranking-CSV"


def stemmed_finder(first_only: bool):
    """Object mentions where the name is missing as a phrase: the object's words the other object lacks (stopwords
    aside), matched by Snowball stem; all such words, or only the first."""
    import Stemmer

    stem, word = Stemmer.Stemmer("english").stemWord, re.compile(r"[A-Za-z0-9][A-Za-z0-9'+-]*")
    stop = frozenset("a an the of for to in on and or vs versus with by at from is are be it its".split())

    def mentions(text: str, obj: str, other: str) -> list[tuple[int, int]]:
        theirs = {stem(w.lower()) for w in word.findall(other)}
        stems = [s for s in (stem(w.lower()) for w in word.findall(obj) if w.lower() not in stop) if s not in theirs]
        stems = set(stems[:1] if first_only else stems)
        return [m.span() for m in word.finditer(text) if stem(m.group().lower()) in stems]
    return mentions


def stemmed_mentions(qa, dev, embed) -> dict:
    """The shipped comparative head's CV over SPLITS fold splits with object mentions found literally (as shipped)
    or, where an object has no literal mention, by stemmed words (`stemmed_finder`); and the best decoder offsets."""
    side = _shipped_side()
    gold = [e.label for e in dev]

    def with_mentions(examples, finder):
        return [replace(e, spans=tuple(e.spans[r] or finder(e.text, e.objects[r], e.objects[1 - r])
                                       for r in (0, 1))) for e in examples]

    def macro_f1(probabilities, offsets=np.zeros(len(LABELS))):
        shifted = np.exp(np.log(probabilities + 1e-9) + offsets)
        return label_scores(gold, [p.label for p in decode_comparative(shifted, LABELS)], LABELS)["macro_f1"]

    result = {}
    for name, finder in (("literal", None), ("stemmed_words", stemmed_finder(False)),
                         ("stemmed_first_word", stemmed_finder(True))):
        variant_qa, variant_dev = ((qa, dev) if finder is None
                                   else (with_mentions(qa, finder), with_mentions(dev, finder)))
        found = sum(bool(s) for e in variant_dev for s in e.spans)
        probabilities = [out_of_fold_dev(variant_qa, variant_dev, embed, COMPARATIVE_C, DEV_WEIGHT, SEED + split,
                                         side) for split in range(SPLITS)]
        scores = [macro_f1(p) for p in probabilities]
        result[name] = {"passage_objects_mentioned": found, "splits": scores,
                        "mean": round(float(np.mean(scores)), 4), "sd": round(float(np.std(scores)), 4)}
        if finder is None:  # offsets to log P(FIRST), log P(SECOND) and log P(NEUTRAL), chosen on these folds
            grid = np.linspace(-1, 1, 9)
            best = max((float(np.mean([macro_f1(p, np.array([a, a, b, 0.0])) for p in probabilities])), a, b)
                       for a in grid for b in grid)
            result[name]["best_offsets"] = {"mean": round(best[0], 4), "sided": best[1], "neutral": best[2]}
        logging.info("%s", json.dumps({name: result[name]}))
    return result


def _shipped_side() -> SideModel:
    """The side model as `python -m app.training.stance` trains it (CompSent-19's train split, SIDE_C, SEED)."""
    return train_side(load_compsent(common.DEFAULT_DATA_DIR, "train"), SIDE_C, SEED)


def _dev_cv(qa, dev, embed, side) -> list[float]:
    """The shipped comparative head's leave-topics-out dev macro-F1 with `side`, one per fold split (SPLITS)."""
    return [float(cross_validate_dev(qa, dev, embed, COMPARATIVE_C, DEV_WEIGHT, SEED + split, side)[0])
            for split in range(SPLITS)]


def _cv_with_columns(qa, dev, embed, side, columns, width: int, emphasis: float) -> list[float]:
    """The shipped comparative head's dev macro-F1 over SPLITS fold splits with `width` extra columns
    (`columns(examples)`) after its own, weighed by `emphasis` (`fit_head`); the matrix and emphasis of
    app.training.stance are swapped for the experiment's and restored."""
    from unittest import mock

    from app.training import stance as training

    shipped_matrix, shipped_emphasis = training.comparative_matrix, training.side_emphasis

    def matrix(examples, embed_, side_=None):
        return np.hstack([shipped_matrix(examples, embed_, side_), columns(examples)])

    def weigh(total):
        weights = shipped_emphasis(total)
        weights[-width:] = emphasis
        return weights

    with mock.patch.object(training, "comparative_matrix", matrix), mock.patch.object(training, "side_emphasis",
                                                                                      weigh):
        return _dev_cv(qa, dev, embed, side)


def _column_variants(qa, dev, embed, side, variants) -> dict:
    """`_cv_with_columns` of each (name, columns, width, emphasis) variant, logged as it goes."""
    result = {}
    for name, columns, width, emphasis in variants:
        scores = _cv_with_columns(qa, dev, embed, side, columns, width, emphasis)
        result[f"{name}_emphasis_{emphasis:g}"] = _mean_sd(scores)
        logging.info("%s", json.dumps(result))
    return result


def _mean_sd(scores: list[float]) -> dict:
    return {"splits": [round(score, 4) for score in scores], "mean": round(float(np.mean(scores)), 4),
            "sd": round(float(np.std(scores)), 4)}


def object_embeddings(qa, dev, embed) -> dict:
    """The shipped comparative head's CV over SPLITS fold splits with extra columns from the objects' names embedded
    (A, B) and the passage's (p): "diff", cos(p, A) - cos(p, B) and their sum (as heavy as the side model's columns,
    `side_emphasis`, or not); "dir", p * (A - B); "prod", p * title query."""
    side = _shipped_side()

    def columns(examples, variant: str) -> np.ndarray:
        p = embed([e.text for e in examples])
        if variant == "prod":
            return (p * embed([queries_of(e)[0] for e in examples])).astype(np.float32)
        a, b = embed([e.objects[0] for e in examples]), embed([e.objects[1] for e in examples])
        if variant == "dir":
            return (p * (a - b)).astype(np.float32)
        first, second = (p * a).sum(axis=1), (p * b).sum(axis=1)
        return np.stack([first - second, first + second], axis=1).astype(np.float32)

    widths = {"diff": 2, "dir": EMBEDDING_DIM, "prod": EMBEDDING_DIM}
    return _column_variants(qa, dev, embed, side, [
        (variant, lambda examples, v=variant: columns(examples, v), widths[variant], emphasis)
        for variant, emphasis in (("diff", 1.0), ("diff", SIDE_EMPHASIS), ("dir", 1.0), ("prod", 1.0))])


def cross_sides(qa, dev, embed) -> dict:
    """The shipped comparative head's CV over SPLITS fold splits with two columns from the controversial
    cross-encoder (as shipped, never trained on comparative data): its PRO-vs-CON log-odds of the passage toward
    "Is A better than B?" and toward "Is B better than A?", as heavy as the other columns or as the side model's."""
    side = _shipped_side()
    cross = StanceCrossEncoder.load(device="cpu")
    pairs = sorted({(f"Is {x} better than {y}?", e.text) for e in qa + dev
                    for x, y in (e.objects, e.objects[::-1])})
    probabilities = cross.probabilities(pairs)
    log_odds = dict(zip(pairs, np.log(probabilities[:, 0] + 1e-6) - np.log(probabilities[:, 1] + 1e-6)))

    def columns(examples) -> np.ndarray:
        return np.array([[log_odds[f"Is {x} better than {y}?", e.text] for x, y in (e.objects, e.objects[::-1])]
                         for e in examples], np.float32)

    result = {"pairs_read": len(pairs), "shipped": _mean_sd(_dev_cv(qa, dev, embed, side))}
    for emphasis in (1.0, SIDE_EMPHASIS):
        result[f"emphasis_{emphasis:g}"] = _mean_sd(_cv_with_columns(qa, dev, embed, side, columns, 2, emphasis))
        logging.info("%s", json.dumps(result))
    return result


# The MiniLM side model of neural-side, fixed before its figures were seen: the stance cross-encoder's recipe on
# sentences (3 layers, lr 1e-4, 3 epochs), 96 word pieces (CompSent-19's sentences are shorter).
NEURAL_SIDE = Recipe(layers=3, max_length=96, epochs=3, lr=1e-4, batch_size=32)


class CrossSide(SideModel):
    """The side model's interface (`app.stance_side.SideModel`) over a MiniLM cross-encoder reading a masked
    sentence alone."""

    def __init__(self, model: StanceCrossEncoder):
        self.model = model

    def _softmax(self, sentences):
        return self.model.probabilities([("", sentence) for sentence in sentences], batch_size=64)


def neural_side(qa, dev, embed) -> dict:
    """The side model as a MiniLM cross-encoder (top layers and head trained on CompSent-19's train split with
    object-swapped copies, NEURAL_SIDE) instead of the n-gram regression: CompSent-19 test macro-F1 and the
    comparative head's CV over SPLITS fold splits, with either side model."""
    import torch

    from app.stance_side import LABELS as SIDE_LABELS
    from app.stance_side import both_object_sentences, masked

    compsent, test = load_compsent(common.DEFAULT_DATA_DIR, "train"), load_compsent(common.DEFAULT_DATA_DIR, "test")
    torch.manual_seed(SEED)
    model = StanceCrossEncoder.create(SIDE_LABELS, "side", NEURAL_SIDE.layers, NEURAL_SIDE.max_length)
    doubled = compsent + [swap(e) for e in compsent]
    result = {"training": fit(model, lower_states(model, [("", masked(e.text, *e.spans)) for e in doubled]),
                              [e.label for e in doubled], NEURAL_SIDE, SEED),
              "dev_passages_with_a_both_object_sentence": sum(bool(both_object_sentences(e.text, *e.spans))
                                                              for e in dev)}
    for name, side in (("ngram", train_side(compsent, SIDE_C, SEED)), ("minilm", CrossSide(model))):
        result[name] = {"compsent19_test": label_scores([e.label for e in test], side_labels(side, test),
                                                        list(SIDE_LABELS)),
                        "dev_cv": _mean_sd(_dev_cv(qa, dev, embed, side))}
        logging.info("%s", json.dumps({name: result[name]}))
    return result


def label_biases(qa, dev, embed) -> dict:
    """Macro-F1 rewards each label's F1 alike, which argmax over the head's probabilities does not aim at: per-label
    offsets on the out-of-fold log-probabilities (one for both sides, which must stay symmetric, one for NEUTRAL,
    one for NO), chosen on the other folds of each split (nested) from a grid, and for reference on all folds."""
    grid = np.round(np.linspace(-0.6, 0.6, 7), 2)
    offsets = [(side, neutral, no) for side in grid for neutral in grid for no in grid]
    order = [LABELS.index(label) for label in ("FIRST", "SECOND", "NEUTRAL", "NO")]
    side = _shipped_side()
    gold = np.array([e.label for e in dev])

    def labels(probabilities, offset):
        side_, neutral, no = offset
        shifted = np.log(probabilities + 1e-9)
        shifted[:, order] += np.array([side_, side_, neutral, no])
        shifted = np.exp(shifted)
        return np.array([p.label for p in decode_comparative(shifted / shifted.sum(1, keepdims=True), LABELS)])

    def macro(rows, predicted):
        return label_scores(list(gold[rows]), list(predicted[rows]), LABELS)["macro_f1"]

    result = {"shipped": [], "nested": [], "chosen": [], "by_offset": {}}
    for split in range(SPLITS):
        seed = SEED + split
        probabilities = out_of_fold_dev(qa, dev, embed, COMPARATIVE_C, DEV_WEIGHT, seed, side)
        predictions = {offset: labels(probabilities, offset) for offset in offsets}
        folds = [np.array([e.group in fold for e in dev])
                 for fold in common.topic_folds([e.group for e in dev], FOLDS, seed)]
        nested = np.empty(len(dev), dtype=object)
        for held in folds:
            best = max(offsets, key=lambda offset: (macro(~held, predictions[offset]),
                                                    -sum(map(abs, offset))))  # ties: the smallest offsets
            nested[held] = predictions[best][held]
            result["chosen"].append([float(x) for x in best])
        everything = np.ones(len(dev), bool)
        result["shipped"].append(macro(everything, predictions[(0.0, 0.0, 0.0)]))
        result["nested"].append(label_scores(list(gold), list(nested), LABELS))
        for offset in offsets:
            result["by_offset"].setdefault(offset, []).append(macro(everything, predictions[offset]))
        logging.info("split %d: shipped %.4f, nested %.4f", split, result["shipped"][-1],
                     result["nested"][-1]["macro_f1"])
    scores = [row["macro_f1"] for row in result["nested"]]
    best_overall = max(result["by_offset"], key=lambda offset: np.mean(result["by_offset"][offset]))
    result.update(shipped_mean=round(float(np.mean(result["shipped"])), 4),
                  nested_mean=round(float(np.mean(scores)), 4), nested_sd=round(float(np.std(scores)), 4),
                  best_on_all_folds={"offset": [float(x) for x in best_overall],
                                     "mean": round(float(np.mean(result["by_offset"][best_overall])), 4)})
    del result["by_offset"]
    return result


def _object_sentiment(example, vader) -> tuple[list[float], list[float], list[int]]:
    """Per object: the sums of VADER's positive and negative compound scores over the sentences that name it and
    not the other, and their count."""
    positive, negative, count = [0.0, 0.0], [0.0, 0.0], [0, 0]
    for start, end in sentence_spans(example.text):
        inside = [bool(within(example.spans[role], start, end)) for role in (0, 1)]
        for role in (0, 1):
            if inside[role] and not inside[1 - role]:
                compound = vader.polarity_scores(example.text[start:end])["compound"]
                positive[role] += max(compound, 0.0)
                negative[role] += max(-compound, 0.0)
                count[role] += 1
    return positive, negative, count


def object_sentiment(qa, dev, embed) -> dict:
    """The shipped comparative head's CV over SPLITS fold splits with columns of each object's sentiment
    (`_object_sentiment`): "sums", "diff" and "mean", as heavy as the other columns or as the side model's."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    side, vader = _shipped_side(), SentimentIntensityAnalyzer()

    def columns(examples, variant: str) -> np.ndarray:
        rows = []
        for example in examples:
            positive, negative, count = _object_sentiment(example, vader)
            if variant == "sums":
                rows.append([np.log1p(positive[0]), np.log1p(negative[0]), np.log1p(positive[1]),
                             np.log1p(negative[1])])
            elif variant == "diff":
                net = [positive[role] - negative[role] for role in (0, 1)]
                rows.append([np.tanh(net[0] - net[1]), np.tanh(net[0] + net[1])])
            else:
                mean = [(positive[r] - negative[r]) / count[r] if count[r] else 0.0 for r in (0, 1)]
                rows.append([mean[0] - mean[1], mean[0] + mean[1]])
        return np.asarray(rows, np.float32)

    return {"shipped": _mean_sd(_dev_cv(qa, dev, embed, side)), **_column_variants(qa, dev, embed, side, [
        (variant, lambda examples, v=variant: columns(examples, v), width, emphasis)
        for variant, width in (("sums", 4), ("diff", 2), ("mean", 2)) for emphasis in (1.0, SIDE_EMPHASIS)])}


def sidedness(qa, dev, embed) -> dict:
    """The shipped comparative head's CV over SPLITS fold splits with |first - second| of each paired object feature
    (`comparative_lexical` with the side model) as columns: all 6 pairs, or the side model's 2."""
    side = _shipped_side()
    names = list(LEXICAL_FEATURE_NAMES) + list(SIDE_FEATURE_NAMES)
    pairs = [(names.index(name), names.index(name.replace("first", "second"))) for name in names
             if "first" in name and name.replace("first", "second") in names]

    read: dict[tuple, np.ndarray] = {}  # each text and object order once across folds and splits

    def columns(examples, only_side: bool) -> np.ndarray:
        for e in examples:
            if (e.text, e.objects) not in read:
                read[e.text, e.objects] = comparative_lexical([e.text], e.objects, [e.spans], side)[0]
        rows = np.vstack([read[e.text, e.objects] for e in examples])
        kept = [(a, b) for a, b in pairs if not only_side or names[a].startswith("side_")]
        return np.stack([np.abs(rows[:, a] - rows[:, b]) for a, b in kept], axis=1).astype(np.float32)

    return {"shipped": _mean_sd(_dev_cv(qa, dev, embed, side)), **_column_variants(qa, dev, embed, side, [
        ("side" if only_side else "all", lambda examples, o=only_side: columns(examples, o),
         columns(dev[:1], only_side).shape[1], emphasis)
        for only_side in (False, True) for emphasis in (1.0, SIDE_EMPHASIS)])}


def feature_groups(qa, dev, embed) -> dict:
    """The shipped comparative head's CV over SPLITS fold splits without the passage embedding (its lexical, side
    and query-cosine columns only), without the lexical and side columns (the embedding and query cosines only), and
    the two such heads together (the geometric mean of their out-of-fold probabilities): which columns carry which
    label, and whether heads of one view each do better than one head of both."""
    from unittest import mock

    from app.training import stance as training

    side = _shipped_side()
    shipped_matrix, shipped_emphasis = training.comparative_matrix, training.side_emphasis
    width = len(shipped_matrix(dev[:1], embed, side)[0])
    groups = {"without_embedding": np.arange(EMBEDDING_DIM, width),
              "embedding_and_query_cosines": np.r_[:EMBEDDING_DIM, width - len(QUERY_NAMES):width]}

    def out_of_fold(kept, seed: int) -> np.ndarray:
        with mock.patch.object(training, "comparative_matrix", lambda examples, embed_, side_=None:
                               shipped_matrix(examples, embed_, side_)[:, kept]), \
                mock.patch.object(training, "side_emphasis", lambda total: shipped_emphasis(width)[kept]):
            return out_of_fold_dev(qa, dev, embed, COMPARATIVE_C, DEV_WEIGHT, seed, side)

    gold = [e.label for e in dev]
    found: dict[str, list] = {}
    for split in range(SPLITS):
        probabilities = {name: out_of_fold(kept, SEED + split) for name, kept in groups.items()}
        both = np.exp(np.mean(np.log(list(probabilities.values())), axis=0))
        probabilities["both_heads"] = both / both.sum(axis=1, keepdims=True)
        for name, found_probabilities in probabilities.items():
            predicted = [p.label for p in decode_comparative(found_probabilities, COMPARATIVE_LABELS)]
            found.setdefault(name, []).append(label_scores(gold, predicted, list(COMPARATIVE_LABELS)))
        logging.info("split %d: %s", split, {name: scores[-1]["macro_f1"] for name, scores in found.items()})
    return {name: dict(_mean_sd([score["macro_f1"] for score in scores]),
                       per_label={label: round(float(np.mean([score["per_label"][label] for score in scores])), 3)
                                  for label in COMPARATIVE_LABELS})
            for name, scores in found.items()}


NONLINEAR_VARIANTS = {"trees": 0, "trees_and_16_embedding_components": 16}  # principal components of the embedding


def nonlinear_head(qa, dev, embed) -> dict:
    """The shipped linear comparative head's CV over SPLITS fold splits against gradient-boosted trees
    (`HistGradientBoostingClassifier`, class-balanced, dev passages at DEV_WEIGHT, on object-swapped copies as the
    head) over its columns after the embedding, without or with the embedding's first principal components (fitted
    per fold), each text read in both object orders; and the geometric mean of the linear head's and the trees'
    probabilities at the trees' weight 0.25: whether interactions a linear head cannot form (a side's mentions
    with its sentiment) tell the labels apart."""
    from sklearn.decomposition import PCA
    from sklearn.ensemble import HistGradientBoostingClassifier

    side, labels = _shipped_side(), list(COMPARATIVE_LABELS)
    examples = qa + dev
    features = comparative_matrix(examples, embed, side)
    swapped = comparative_matrix([swap(example) for example in examples], embed, side)
    gold = np.array([labels.index(example.label) for example in examples])
    gold_swapped = np.array([labels.index(SWAPPED[example.label]) for example in examples])

    def trees(train: list[int], test: list[int], components: int) -> np.ndarray:
        rows = np.vstack([features[train], swapped[train]])
        y = np.r_[gold[train], gold_swapped[train]]
        weights = np.tile([DEV_WEIGHT if i >= len(qa) else 1.0 for i in train], 2)
        weights = weights * (weights.sum() / (len(labels) * np.bincount(y, weights, len(labels))))[y]
        pca = PCA(components, random_state=SEED).fit(rows[:, :EMBEDDING_DIM]) if components else None

        def view(matrix: np.ndarray) -> np.ndarray:
            rest = matrix[:, EMBEDDING_DIM:]
            return np.hstack([rest, pca.transform(matrix[:, :EMBEDDING_DIM])]) if pca else rest

        model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15,
                                               l2_regularization=1.0, random_state=SEED)
        model.fit(view(rows), y, sample_weight=weights)
        return average_orders(model.predict_proba(view(features[test])), model.predict_proba(view(swapped[test])),
                              labels)

    found: dict[str, list[float]] = {}
    for split in range(SPLITS):
        seed = SEED + split
        probabilities = {name: np.zeros((len(dev), len(labels))) for name in ("linear", *NONLINEAR_VARIANTS)}
        for fold in common.topic_folds([example.group for example in dev], FOLDS, seed):
            held = [i for i, example in enumerate(dev) if example.group in fold]
            test = [len(qa) + i for i in held]
            train = list(range(len(qa))) + [len(qa) + i for i, example in enumerate(dev) if example.group not in fold]
            head = train_comparative(qa, [e for e in dev if e.group not in fold], embed, COMPARATIVE_C, DEV_WEIGHT,
                                     seed, side)
            probabilities["linear"][held] = symmetric_probabilities(head, features[test], swapped[test])
            for name, components in NONLINEAR_VARIANTS.items():
                probabilities[name][held] = trees(train, test, components)
        blend = np.exp(0.75 * np.log(probabilities["linear"] + 1e-9) + 0.25 * np.log(probabilities["trees"] + 1e-9))
        probabilities["linear_and_trees"] = blend / blend.sum(axis=1, keepdims=True)
        for name, found_probabilities in probabilities.items():
            predicted = [p.label for p in decode_comparative(found_probabilities, COMPARATIVE_LABELS)]
            found.setdefault(name, []).append(f1_score([e.label for e in dev], predicted, labels=labels,
                                                       average="macro"))
        logging.info("split %d: %s", split, {name: round(scores[-1], 3) for name, scores in found.items()})
    return {name: _mean_sd(scores) for name, scores in found.items()}


SIDED_VARIANTS = (("ukp", 0.3), ("ukp", 1.0), ("ukp", 3.0), ("compsent", 0.1))


def sided_data(qa, dev, embed) -> dict:
    """The shipped comparative head's CV over SPLITS fold splits with extra sided examples in every fold's
    training, weighted per set (SIDED_VARIANTS): UKPConvArg1's "X or Y" posts, CompSent-19 train's BETTER / WORSE
    sentences."""
    from unittest import mock

    from app.training import stance as training

    side = _shipped_side()
    extra = {"ukp": [ComparativeExample("ukp", topic.title, text, topic.objects,
                                        (find_mentions(text, topic.objects[0]), find_mentions(text, topic.objects[1])),
                                        label)
                     for topic, texts, gold in read_ukp_debates(common.DEFAULT_DATA_DIR) if topic.objects
                     for text, label in zip(texts, gold)],
             "compsent": [replace(example, group="compsent",
                                  question=f"Which is better, {example.objects[0]} or {example.objects[1]}?")
                          for example in load_compsent(common.DEFAULT_DATA_DIR, "train") if example.label != "NONE"]}
    weights = {"qa": 1.0}

    def weighted(qa_, dev_, embed_, c, dev_weight, seed, side_=None):  # train_comparative, each set at its weight
        examples = qa_ + dev_
        examples = examples + [swap(example) for example in examples]
        features = comparative_matrix(examples, embed_, side_)
        return fit_head(features, [e.label for e in examples], COMPARATIVE_LABELS, c, seed,
                        np.asarray([weights.get(e.group, dev_weight) for e in examples]), training.COMPARATIVE_TOL,
                        training.side_emphasis(features.shape[1]))

    result = {"shipped": _mean_sd(_dev_cv(qa, dev, embed, side))}
    for name, weight in SIDED_VARIANTS:
        weights = {"qa": 1.0, name: weight}
        with mock.patch.object(training, "train_comparative", weighted):
            result[f"{name}_weight_{weight:g}"] = _mean_sd(_dev_cv(qa + extra[name], dev, embed, side))
        logging.info("%s", json.dumps(result))
    return result


def relevance_no(qa, dev, embed) -> dict:
    """The relevance head's out-of-fold score as evidence for comparative NO (the dev judges call 444 of the 451
    non-relevant passages NO): log P(NO) lowered by w times the passage's standardised relevance logit, the
    relevance head of each fold trained without its topics (`app.training.relevance.train_without`), w chosen on
    the other folds of each split (nested) and, for reference, on all of them."""
    from app.training.relevance import DevData, Judged, predict, train_without

    side = _shipped_side()
    data = DevData.load(common.DEFAULT_DATA_DIR, embed.directory)
    judged = Judged.build(data)
    doc_of = dict(zip(data.texts, data.doc_ids))
    row_of = {key: i for i, key in enumerate(zip(judged.qids, judged.doc_ids))}
    rows = np.array([row_of[e.group, doc_of[e.text]] for e in dev])
    gold, grid, no = np.array([e.label for e in dev]), np.linspace(0, 2, 11), LABELS.index("NO")

    def labels(probabilities, relevance, w):
        shifted = np.log(probabilities + 1e-9)
        shifted[:, no] -= w * relevance
        return [p.label for p in decode_comparative(np.exp(shifted), LABELS)]

    result = {"shipped": [], "nested": [], "by_w": {}}
    for split in range(SPLITS):
        seed = SEED + split
        probabilities = out_of_fold_dev(qa, dev, embed, COMPARATIVE_C, DEV_WEIGHT, seed, side)
        topic_folds = common.topic_folds([e.group for e in dev], FOLDS, seed)
        folds = [np.array([e.group in fold for e in dev]) for fold in topic_folds]
        relevance = np.zeros(len(dev))
        for fold, held in zip(topic_folds, folds):
            relevance[held] = predict(train_without(judged, set(fold), seed), judged, rows[held])
        relevance = (relevance - relevance.mean()) / relevance.std()
        nested = np.empty(len(dev), dtype=object)
        for held in folds:
            best = max(grid, key=lambda w: label_scores(list(gold[~held]), labels(probabilities[~held],
                                                        relevance[~held], w), LABELS)["macro_f1"])
            nested[held] = labels(probabilities[held], relevance[held], best)
        result["shipped"].append(label_scores(list(gold), labels(probabilities, relevance, 0.0), LABELS)["macro_f1"])
        result["nested"].append(label_scores(list(gold), list(nested), LABELS))
        for w in grid:
            result["by_w"].setdefault(round(float(w), 1), []).append(
                label_scores(list(gold), labels(probabilities, relevance, w), LABELS)["macro_f1"])
        logging.info("split %d: shipped %.4f, nested %s", split, result["shipped"][-1], result["nested"][-1])
    scores = [row["macro_f1"] for row in result["nested"]]
    result.update(shipped_mean=round(float(np.mean(result["shipped"])), 4),
                  nested_mean=round(float(np.mean(scores)), 4), nested_sd=round(float(np.std(scores)), 4),
                  by_w={w: round(float(np.mean(v)), 4) for w, v in result["by_w"].items()})
    return result


# The columns of `app.stance.lexical_features` that count (mentions, sentiment words, "than", "?"), as log1p(count).
_COUNT_COLUMNS = [LEXICAL_FEATURE_NAMES.index(name) for name in LEXICAL_FEATURE_NAMES
                  if not name.endswith(("first_position", "length", "both", "neither"))]


def length_free(qa, dev, embed) -> dict:
    """The shipped comparative head's CV over SPLITS fold splits with its count columns read as rates, log1p of the
    count per 100 words, so that a text read twice (or a long page) counts as its argument does: the same argument
    repeated, or after 150 words of filler, was labelled NEUTRAL where it alone was FIRST (an attack)."""
    from unittest import mock

    import app.stance

    shipped = app.stance.lexical_features

    def rates(text, spans_first, spans_second):
        row = shipped(text, spans_first, spans_second)
        per_100_words = 100.0 / max(len(text.split()), 1)
        row[_COUNT_COLUMNS] = np.log1p(np.expm1(row[_COUNT_COLUMNS]) * per_100_words)
        return row

    side = _shipped_side()
    result = {"shipped": _mean_sd(_dev_cv(qa, dev, embed, side))}
    logging.info("%s", json.dumps(result))
    with mock.patch.object(app.stance, "lexical_features", rates):
        result["rates"] = _mean_sd(_dev_cv(qa, dev, embed, side))
    return result


def no_objects(qa, dev, embed) -> dict:
    """A comparative topic whose objects the run cannot find (no <objects>, none the question classifier reads):
    the shipped head's leave-topics-out dev macro-F1 over SPLITS fold splits with each held-out passage read as
    naming neither object (its sides tie, so NEUTRAL or NO), against labelling every passage NO, and against the
    objects known."""
    side = _shipped_side()
    gold = [example.label for example in dev]
    result: dict[str, list] = {"objects_known": [], "objects_unknown": [], "all_no": []}
    for split in range(SPLITS):
        known, unknown = (np.zeros((len(dev), len(LABELS)), np.float32) for _ in range(2))
        for fold in common.topic_folds([example.group for example in dev], FOLDS, SEED + split):
            rows = [i for i, example in enumerate(dev) if example.group in fold]
            held = [dev[i] for i in rows]
            head = train_comparative(qa, [e for e in dev if e.group not in fold], embed, COMPARATIVE_C, DEV_WEIGHT,
                                     SEED + split, side)
            known[rows] = symmetric_probabilities(head, comparative_matrix(held, embed, side),
                                                  comparative_matrix([swap(e) for e in held], embed, side))
            blind = comparative_matrix([replace(e, spans=([], [])) for e in held], embed, side)
            unknown[rows] = symmetric_probabilities(head, blind, blind)
        for name, probabilities in (("objects_known", known), ("objects_unknown", unknown)):
            result[name].append(label_scores(gold, [p.label for p in decode_comparative(probabilities, LABELS)],
                                             LABELS))
        result["all_no"].append(label_scores(gold, ["NO"] * len(dev), LABELS))
        logging.info("split %d: %s", split, json.dumps({name: rows[-1] for name, rows in result.items()}))
    return {name: dict(_mean_sd([row["macro_f1"] for row in rows]),
                       per_label={label: round(float(np.mean([row["per_label"][label] for row in rows])), 3)
                                  for label in LABELS})
            for name, rows in result.items()}


def targets_dev(data_dir: Path, embed, out: Path, seed: int = SEED, dev_motions: int = 10) -> dict:
    """Whether the cross-encoder should learn subject phrases (`--targets`), chosen without a test split: IBM Claim
    Stance train's target phrases (`load_ibm_targets`) of 15 of its 25 motions are learnt, those of the other 10
    (drawn with `seed`) measured, against the shipped cross-encoder (the same recipe without phrases) on the same;
    with ArgQ dev, the recipe's selection set, and each set's test figures as training reports them. Writes the
    model trained so to `out`."""
    from app.training.stance_cross import train_controversial

    targets = load_ibm_targets(data_dir, "train")
    motions = sorted({e.topic for e in targets})
    held = {motions[int(i)] for i in np.random.default_rng(seed).choice(len(motions), dev_motions, replace=False)}
    measured = [e for e in targets if e.topic in held]
    shipped = StanceCrossEncoder.load(device="cpu")

    def read(model: StanceCrossEncoder, examples, form) -> dict:
        probabilities = model.probabilities([(form(e.topic), e.text) for e in examples])
        return label_scores([e.label for e in examples], [model.labels[i] for i in probabilities.argmax(1)],
                            ["PRO", "CON"])

    baseline = {f"ibm_targets_dev_{name}": read(shipped, measured, form)["macro_f1"]
                for name, form in (("motion", str), ("question", question_or_motion))}
    model, facts = train_controversial(data_dir, embed, seed, targets=[e for e in targets if e.topic not in held],
                                       extra_tests={"ibm_targets_dev": measured})
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "stance-cross-controversial.npz", **facts)
    return {"dev_motions": sorted(held), "dev_pairs": len(measured), "shipped": baseline,
            "shipped_metrics": shipped.metadata["metrics"], "with_targets": facts["metrics"]}


def long_texts(data_dir: Path, min_words: int = 90, window_words: int = 90, max_windows: int = 3) -> dict:
    """Whether the cross-encoder should read a long text whole rather than its first 128 word pieces, on VAST train's
    PRO / CON comments of more than `min_words` words (the cross-encoder never trained on VAST; 53% of its comments
    are that long): first 128 pieces, first 256 pieces, and the mean log-odds over the text's first `max_windows`
    sentence-bounded windows of `window_words` words (`app.passages.windows`), with the pairs each reads."""
    from app.passages import windows

    examples = [e for e in load_vast(data_dir, "train")
                if e.label in ("PRO", "CON") and len(e.text.split()) > min_words]
    gold = [e.label for e in examples]
    model = StanceCrossEncoder.load(device="cpu")
    pro = model.labels.index("PRO")

    def scores(p_pro: np.ndarray, pairs: int) -> dict:
        return dict(label_scores(gold, ["PRO" if p >= 0.5 else "CON" for p in p_pro], ["PRO", "CON"]), pairs=pairs)

    pairs = [(e.topic, e.text) for e in examples]
    result = {"texts": len(examples), "first_128": scores(model.probabilities(pairs)[:, pro], len(pairs))}
    model.max_length = 256
    result["first_256"] = scores(model.probabilities(pairs)[:, pro], len(pairs))
    model.max_length = 128
    owner, pieces = [], []
    for i, e in enumerate(examples):
        for window in windows(e.text, window_words)[:max_windows]:
            owner.append(i)
            pieces.append((e.topic, window))
    p_pro = np.clip(model.probabilities(pieces)[:, pro], 1e-6, 1 - 1e-6)
    log_odds = np.bincount(owner, np.log(p_pro / (1 - p_pro))) / np.bincount(owner)
    result["windows_mean"] = scores(1 / (1 + np.exp(-log_odds)), len(pieces))
    return result


def read_ukp_debates(data_dir: Path) -> list[tuple[Topic, list[str], list[str]]]:
    """(topic, posts, gold labels) per UKPConvArg1 debate, sides from UKP_DEBATES; a file not in it is an error."""
    debates: dict[str, tuple[Topic, list[str], list[str]]] = {}
    for path in sorted((data_dir / UKP_FOLDER).glob("*.csv")):
        debate, side = path.stem.split("_", 1)
        question, objects, sides = UKP_DEBATES[debate]
        topic, texts, gold = debates.setdefault(debate, (Topic(str(len(debates) + 1), question, objects=objects),
                                                         [], []))
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            texts.append(line.split("\t", 2)[2].replace("<br/>", "\n"))
            gold.append(sides[side])
    return list(debates.values())


def clean_motions(data_dir: Path, cross_path: Path | None, cache_dir: Path | None) -> dict:
    """The cross-encoder's figures on the reported test pairs whose motion no training motion restates (see the
    module's docstring), as the trainer measures them (`measure_controversial`)."""
    from app.stance_cross import DEFAULT_MODEL
    from app.training.stance import load_argkp, load_extra_sets
    from app.training.stance_cross import ARGQ_MIN_CONFIDENCE, measure_controversial

    embed = EmbeddingCache(cache_dir)
    training = (load_argq(data_dir, "train", ARGQ_MIN_CONFIDENCE) + load_ibm_claims(data_dir, "train")
                + load_perspectrum(data_dir) + load_extra_sets(data_dir, ("argkp",)))
    tests = {"argq_dev": load_argq(data_dir, "dev"), "argq_test": load_argq(data_dir, "test"),
             "ibm_claim_stance_test": load_ibm_claims(data_dir, "test"),
             "perspectrum_test": load_perspectrum(data_dir, ("test",)), "argkp_test": load_argkp(data_dir, ("test",))}
    clean = {name: without_topics(examples, training, embed) for name, examples in tests.items()}
    model = StanceCrossEncoder.load(cross_path or DEFAULT_MODEL, device="cpu")
    return {name: dict(figures, of=len(tests[name])) for name, figures in measure_controversial(model, clean).items()}


def ukp_sides(model_path: Path | None, cross_path: Path | None = None) -> dict:
    """The run's stance labels on UKPConvArg1 posts: PRO / CON macro-F1 of yes/no debates (heads; cross-encoder on
    every post) and FIRST / SECOND macro-F1 of "X or Y" debates, with the share of posts given a side."""
    model = StanceModel.load(model_path, device="cpu")
    model.cross_path = cross_path
    found: dict[str, tuple[list[str], list[str]]] = {}
    for topic, texts, gold in read_ukp_debates(common.DEFAULT_DATA_DIR):
        runs = ([("comparative", "comparative", 0)] if topic.objects else
                [("controversial_heads", "controversial", 0), ("controversial_cross", "controversial", len(texts))])
        for name, task, depth in runs:
            predicted = [p.label for p in model.predict(topic, texts, task=task, cross_depth=depth)]
            found.setdefault(name, ([], []))[0].extend(gold)
            found[name][1].extend(predicted)
    result = {}
    for name, (gold, predicted) in found.items():
        sides = ["FIRST", "SECOND"] if name == "comparative" else ["PRO", "CON"]
        result[name] = dict(label_scores(gold, predicted, sides), posts=len(gold),
                            sided=round(sum(p in sides for p in predicted) / len(predicted), 3))
    return result


# The fine-tuning of ukp-finetune, fixed after one look at a replay variant (lr 3e-5, 2,000 ArgQ / ArgKP train
# arguments mixed in: 0.685 -> 0.697, ArgQ dev unchanged), not tuned further.
UKP_FINETUNE = Recipe(layers=3, max_length=128, epochs=2, lr=1e-4, head_lr=1e-3)


def either_or_pairs(ukp) -> tuple[list[tuple[str, str]], list[str]]:
    """UKPConvArg1's "X or Y" debate posts as PRO / CON pairs: toward "Is X better than Y?" (FIRST -> PRO) and
    "Is Y better than X?" (FIRST -> CON)."""
    pairs, labels = [], []
    for topic, texts, gold in ukp:
        if topic.objects:
            a, b = topic.objects
            for question, favoured in ((f"Is {a} better than {b}?", "FIRST"), (f"Is {b} better than {a}?", "SECOND")):
                pairs += [(question, text) for text in texts]
                labels += ["PRO" if label == favoured else "CON" for label in gold]
    return pairs, labels


def ukp_finetune_all(data_dir: Path, labels: Path | None, seeds: tuple[int, ...] = (SEED, 1, 2, 3)) -> dict:
    """The shipped stance cross-encoder fine-tuned (UKP_FINETUNE) on all of UKPConvArg1's debate posts (yes/no
    debates toward their question, "X or Y" ones as `either_or_pairs`), once per seed. Its own PRO / CON reading
    (argmax) of the sided real args.me texts of BEIR's sample (`labels`, as `beir_sample` reads them: without the
    words their debate shares) and ArgQ dev, before and per seed; and, with the first seed, the test sets the
    shipped model must not lose (`app.training.stance_cross.train_controversial`'s: macro-F1 with the motions as
    written and asked as questions)."""
    from app.training.stance_cross import CONTROVERSIAL_LABELS, load_argkp, measure_controversial

    model = StanceCrossEncoder.load(device="cpu")
    shipped = {name: tensor.clone() for name, tensor in model.network.state_dict().items()}
    ukp = read_ukp_debates(data_dir)
    pairs = [(topic.title, text) for topic, texts, _ in ukp if not topic.objects for text in texts]
    gold = [label for topic, _, labels_ in ukp if not topic.objects for label in labels_]
    either_or, either_or_labels = either_or_pairs(ukp)
    states = lower_states(model, pairs + either_or)
    checks = {"argq_dev": [(question_or_motion(e.topic), e.text, e.label) for e in load_argq(data_dir, "dev")]}
    if labels is not None:
        checks["beir_sample"] = beir_sample_pairs(data_dir, labels)
    check_states = {name: lower_states(model, [(q, t) for q, t, _ in rows]) for name, rows in checks.items()}
    tests = {"argq_test": load_argq(data_dir, "test"), "ibm_claim_stance_test": load_ibm_claims(data_dir, "test"),
             "perspectrum_test": load_perspectrum(data_dir, ("test",)), "argkp_test": load_argkp(data_dir, ("test",)),
             "vast_test_sided": [e for e in load_vast(data_dir, "test") if e.label in CONTROVERSIAL_LABELS]}

    def read_checks() -> dict:
        return {name: label_scores([g for _, _, g in checks[name]],
                                   [model.labels[i] for i in predict_states(model, rows).argmax(1)],
                                   ["PRO", "CON"])["macro_f1"] for name, rows in check_states.items()}

    def read_tests() -> dict:
        return {name: [scores["macro_f1"], scores["question_macro_f1"]]
                for name, scores in measure_controversial(model, tests).items()}

    result = {"before": read_checks(), "before_tests": read_tests(), "after": {}}
    for seed in seeds:
        model.network.load_state_dict(shipped)
        fit(model, states, gold + either_or_labels, UKP_FINETUNE, seed)
        result["after"][seed] = read_checks()
        if seed == seeds[0]:
            result["after_tests"] = read_tests()
        logging.info("seed %s: %s", seed, json.dumps(result["after"][seed]))
    model.network.load_state_dict(shipped)
    return result


# Sentences that report the other side: "My opponent claims ...", "you said ...", anything in quotation marks.
REBUTTAL = re.compile(r"\b(my opponent|opponent'?s?|you (said|say|claim|stated|state|argue|argued)|"
                      r"(pro|con|he) (says|said|claims|argues)|they (say|claim))\b|[\"\u201c]", re.IGNORECASE)


def post_readings(data_dir: Path, labels: Path) -> dict:
    """How the shipped cross-encoder should read a long debate post, on the 178 sided real args.me texts of BEIR's
    sample (`beir_sample_pairs`) and UKPConvArg1's 588 yes/no debate posts: its own PRO / CON (the sign of its
    log-odds) reading the first 128 word pieces (shipped), the first 256, the mean log-odds over the first k windows
    of w words (`app.passages.windows`), and the text without the sentences that report the other side (REBUTTAL).
    Accuracy over all texts and over those over 120 words (none of UKPConvArg1's)."""
    from app.passages import sentence_spans, windows
    from app.stance import _log_odds, _pro_con

    model = StanceModel.load(device="cpu")
    cross = model.cross
    sets = {"beir_sample": beir_sample_pairs(data_dir, labels),
            "ukp_yes_no_posts": [(topic.title, text, label) for topic, texts, gold in read_ukp_debates(data_dir)
                                 if not topic.objects for text, label in zip(texts, gold)]}

    def odds(rows: list[tuple[str, str]]) -> np.ndarray:
        return _log_odds(_pro_con(np.concatenate([cross.controversial(question, [text]) for question, text in rows]),
                                  cross.labels))

    def windowed(rows, words: int, k: int) -> np.ndarray:
        return np.array([odds([(question, window) for window in windows(text, words)[:k] or [text]]).mean()
                         for question, text in rows])

    def without_rebuttals(text: str) -> str:
        kept = [text[a:b] for a, b in sentence_spans(text) if not REBUTTAL.search(text[a:b])]
        return " ".join(kept) or text

    result = {}
    for name, rows in sets.items():
        gold = np.array([label == "PRO" for _, _, label in rows])
        long = np.array([len(text.split()) > 120 for _, text, _ in rows])
        pairs = [(question, text) for question, text, _ in rows]
        readings = {"first_128": lambda: odds(pairs)}
        for words, k in ((60, 2), (60, 3), (90, 2), (90, 3)):
            readings[f"windows_{k}x{words}"] = lambda words=words, k=k: windowed(pairs, words, k)
        readings["without_rebuttals"] = lambda: odds([(q, without_rebuttals(t)) for q, t in pairs])

        def first_256() -> np.ndarray:
            cross.max_length = 256
            try:
                return odds(pairs)
            finally:
                cross.max_length = 128

        readings["first_256"] = first_256
        result[name] = {"n": len(rows), "over_120_words": int(long.sum())}
        for reading, read in readings.items():
            right = (read() > 0) == gold
            result[name][reading] = {"accuracy": round(float(right.mean()), 3),
                                     "over_120_words": round(float(right[long].mean()), 3) if long.any() else None}
    return result


# Comparatives and their antonyms for antonym-swaps: swapping every one in a sentence flips which object it favours.
ANTONYMS = {"18_pairs": [("better", "worse"), ("faster", "slower"), ("more", "less"), ("higher", "lower"),
                         ("easier", "harder"), ("superior", "inferior"), ("stronger", "weaker"),
                         ("cheaper", "costlier"), ("best", "worst"), ("safer", "riskier"),
                         ("healthier", "unhealthier"), ("greater", "lesser"), ("quicker", "slower"),
                         ("bigger", "smaller"), ("larger", "smaller"), ("prefer", "dislike"),
                         ("outperforms", "underperforms"), ("beats", "loses to")],
            "3_pairs": [("better", "worse"), ("best", "worst"), ("superior", "inferior")],
            "better_worse": [("better", "worse")]}
WORSE_PROBE = "objectfirst is much worse than objectsecond"


def antonym_swaps(data_dir: Path) -> dict:
    """The side model with antonym-swapped copies of CompSent-19's BETTER / WORSE training sentences (label flipped),
    per word list of ANTONYMS: CompSent-19 train's 5-fold macro-F1 (the copies made of the training folds only) and
    the probe sentence's FIRST / SECOND probabilities; the held-out test split for the longest list."""
    train = load_compsent(data_dir, "train")

    def swapper(pairs):
        swaps = {}
        for a, b in pairs:
            swaps.setdefault(a, b)
            swaps.setdefault(b, a)
        words = re.compile(r"\b(" + "|".join(sorted(map(re.escape, swaps), key=len, reverse=True)) + r")\b", re.I)

        def copies(examples):
            result = []
            for e in examples:
                if e.label in ("FIRST", "SECOND") and words.search(e.text):
                    text = words.sub(lambda m: swaps[m.group().lower()], e.text)
                    spans = (find_mentions(text, e.objects[0]), find_mentions(text, e.objects[1]))
                    result.append(replace(e, text=text, spans=spans, label=SWAPPED[e.label]))
            return result
        return copies

    def folds(copies) -> float:
        fold_of = np.random.default_rng(SEED).permutation(len(train)) % FOLDS
        gold, predicted = [], []
        for fold in range(FOLDS):
            kept = [e for e, f in zip(train, fold_of) if f != fold]
            model = train_side(kept + copies(kept), SIDE_C, SEED)
            held = [e for e, f in zip(train, fold_of) if f == fold]
            gold += [e.label for e in held]
            predicted += side_labels(model, held)
        return round(float(f1_score(gold, predicted, average="macro")), 4)

    def probe(model: SideModel) -> list[float]:
        return [round(float(p), 2) for p in model.probabilities([WORSE_PROBE])[0, :2]]

    result = {"none": {"train_cv": folds(lambda examples: []), "probe": probe(_shipped_side())}}
    for name, pairs in ANTONYMS.items():
        copies = swapper(pairs)
        result[name] = {"copies": len(copies(train)), "train_cv": folds(copies),
                        "probe": probe(train_side(train + copies(train), SIDE_C, SEED))}
        logging.info("%s", json.dumps({name: result[name]}))
    test = load_compsent(data_dir, "test")
    gold = [e.label for e in test]
    for name, model in (("none", _shipped_side()),
                        ("18_pairs", train_side(train + swapper(ANTONYMS["18_pairs"])(train), SIDE_C, SEED))):
        result[name]["test"] = round(float(f1_score(gold, side_labels(model, test), average="macro")), 4)
    return result


def window_votes(data_dir: Path, labels: Path, vast_texts: int = 1500) -> dict:
    """The cross-encoder's own PRO / CON accuracy reading a text's first 128 word pieces (shipped) or every window
    of it (`app.passages.windows`), the windows' log-odds combined by their mean or by the most confident, on BEIR's
    sided args.me texts, UKPConvArg1's yes/no posts and `vast_texts` of VAST train's PRO / CON comments over 90
    words (drawn with SEED)."""
    from app.passages import windows
    from app.stance import _log_odds, _pro_con

    cross = StanceModel.load(device="cpu").cross
    vast = [(e.topic, e.text, e.label) for e in load_vast(data_dir, "train")
            if e.label in ("PRO", "CON") and len(e.text.split()) > 90]
    drawn = np.random.default_rng(SEED).choice(len(vast), min(vast_texts, len(vast)), replace=False)
    sets = {"beir_sample": beir_sample_pairs(data_dir, labels),
            "ukp_yes_no_posts": [(topic.title, text, label) for topic, texts, gold in read_ukp_debates(data_dir)
                                 if not topic.objects for text, label in zip(texts, gold)],
            "vast_long": [vast[i] for i in sorted(drawn)]}

    def odds(pairs: list[tuple[str, str]]) -> np.ndarray:
        return _log_odds(_pro_con(cross.probabilities(pairs), cross.labels))

    result = {}
    for name, rows in sets.items():
        gold = np.array([label == "PRO" for _, _, label in rows])
        result[name] = {"n": len(rows), "median_words": float(np.median([len(t.split()) for _, t, _ in rows])),
                        "first_128": round(float(((odds([(q, t) for q, t, _ in rows]) > 0) == gold).mean()), 3)}
        for words, most in ((60, 5), (90, 3), (90, 8)):
            read = [[(question, window) for window in windows(text, words)[:most] or [text]]
                    for question, text, _ in rows]
            flat = odds([pair for pairs in read for pair in pairs])
            votes = np.split(flat, np.cumsum([len(pairs) for pairs in read])[:-1])
            mean = np.array([vote.mean() for vote in votes])
            confident = np.array([vote[np.abs(vote).argmax()] for vote in votes])
            result[name][f"windows_{most}x{words}"] = {
                "pairs_per_text": round(len(flat) / len(rows), 2),
                "mean": round(float(((mean > 0) == gold).mean()), 3),
                "most_confident": round(float(((confident > 0) == gold).mean()), 3)}
        logging.info("%s", json.dumps({name: result[name]}))
    return result


def ukp_finetune(data_dir: Path) -> dict:
    """The shipped stance cross-encoder fine-tuned on UKPConvArg1's debate posts, each yes/no debate held out in
    turn: trained on the other 8 yes/no debates' posts and the 7 "X or Y" debates' posts read toward "Is X better
    than Y?" (FIRST -> PRO) and "Is Y better than X?" (FIRST -> CON). PRO / CON macro-F1 of the cross-encoder's own
    reading (argmax, no NEU or NO) on the held-out debates, before and after; ArgQ dev asked, before and per fold."""
    model = StanceCrossEncoder.load(device="cpu")
    shipped = {name: tensor.clone() for name, tensor in model.network.state_dict().items()}
    ukp = read_ukp_debates(data_dir)
    yes_no = [(topic.title, texts, gold) for topic, texts, gold in ukp if not topic.objects]
    states = [lower_states(model, [(question, text) for text in texts]) for question, texts, _ in yes_no]
    either_or, either_or_labels = either_or_pairs(ukp)
    either_or_states = lower_states(model, either_or)
    argq_dev = load_argq(data_dir, "dev")
    argq_states = lower_states(model, [(question_or_motion(e.topic), e.text) for e in argq_dev])

    def read(rows) -> list[str]:
        return [model.labels[i] for i in predict_states(model, rows).argmax(1)]

    def pro_con_f1(gold, predicted) -> float:
        return label_scores(gold, predicted, ["PRO", "CON"])["macro_f1"]

    argq_gold = [e.label for e in argq_dev]
    before = [read(rows) for rows in states]
    result = {"argq_dev_asked_before": pro_con_f1(argq_gold, read(argq_states)), "debates": {},
              "argq_dev_asked_after": []}
    after = []
    for held, (question, texts, gold) in enumerate(yes_no):
        model.network.load_state_dict(shipped)
        fit(model, [s for d, rows in enumerate(states) if d != held for s in rows] + either_or_states,
            [g for d, (_, _, labels) in enumerate(yes_no) if d != held for g in labels] + either_or_labels,
            UKP_FINETUNE, SEED)
        after.append(read(states[held]))
        result["debates"][question] = {"posts": len(gold),
                                       "right_before": sum(p == g for p, g in zip(before[held], gold)),
                                       "right_after": sum(p == g for p, g in zip(after[-1], gold))}
        result["argq_dev_asked_after"].append(pro_con_f1(argq_gold, read(argq_states)))
        logging.info("%s: %s", question, json.dumps(result["debates"][question]))
    model.network.load_state_dict(shipped)
    gold = [label for _, _, labels in yes_no for label in labels]
    result.update(before=pro_con_f1(gold, [p for rows in before for p in rows]),
                  after=pro_con_f1(gold, [p for rows in after for p in rows]))
    return result


def controversial_sets(embed, out: Path) -> dict:
    """The controversial heads trained with each of ArgKP and VAST and with both; test figures per variant."""
    from app.training.stance import NEUTRAL_MARGIN, controversial_head

    shipped, result = StanceModel.load(device="cpu"), {}
    out.mkdir(parents=True, exist_ok=True)
    for sets in (("argkp",), ("vast",), ("argkp", "vast")):
        head, neutral, facts = controversial_head(common.DEFAULT_DATA_DIR, embed, SEED, sets)
        StanceModel(shipped.comparative, head, NEUTRAL_MARGIN, shipped.metadata, side=shipped.side,
                    neutral=neutral).save(out / f"stance-{'-'.join(sets)}.npz")
        result["+".join(sets)] = facts["metrics"]
    return result


def subject_rule_hits(data_dir: Path, model: StanceModel) -> dict:
    """Where `subject_sentiment` orients natural claims and arguments toward their motion asked as a question (IBM
    Claim Stance, Perspectrum, ArgQ dev): how often it fires, and how often it and the cross-encoder are right
    there."""
    examples = (load_ibm_claims(data_dir, "train") + load_ibm_claims(data_dir, "test") + load_argq(data_dir, "dev")
                + load_perspectrum(data_dir, ("train", "dev", "test")))
    asked = [(e, question_or_motion(e.topic)) for e in examples]
    hits = [(e, question) for e, question in asked if subject_sentiment(e.text, question) is not None]
    rule = [("PRO", "CON")[int(model.orient(Topic("1", question), [e.text])[0].argmax())] for e, question in hits]
    cross = [model.cross.labels[int(model.cross.controversial(question, [e.text])[0].argmax())]
             for e, question in hits]
    return {"statements": len(examples), "fired": len(hits),
            "rule_right": sum(p == e.label for p, (e, _) in zip(rule, hits)),
            "cross_encoder_right": sum(p == e.label for p, (e, _) in zip(cross, hits))}


def stated_stances(data_dir: Path, seed: int = SEED, cross_path: Path | None = None) -> dict:
    """A corpus's stated stance turned toward the topic (StanceModel.orient), measured where its truth is known.

    No args.me judgements are in the data, so two stand-ins: (1) orientation alone, a claim's PRO / CON toward a
    motion (IBM Claim Stance test claims, ArgKP-2021 test key points) and a motion's subject's (IBM Claim Stance test
    motions' targets, as many args.me conclusions only name their debate's subject: `subject_sentiment`, whose hits
    on natural claims `subject_rule_hits` counts); (2) an args.me-like simulation on ArgKP-2021 test: each argument
    gets a key point of its motion, drawn with a fixed seed, as its "conclusion", and the stance toward it that its
    own side implies (PRO when argument and key point share a side); the run must recover the argument's stance
    toward the motion. Rows: the text alone (heads; cross-encoder on every text), and with the
    stated stance oriented by the heads or by the cross-encoder; each with the motion as written ("We should X") and
    asked as Touché asks (`question_or_motion`: "Should we X?"). `cross_path`: a cross-encoder to read with instead
    of the shipped one.
    """
    model = StanceModel.load(device="cpu")
    model.cross_path = cross_path
    result = {"subject_rule_hits": subject_rule_hits(data_dir, model)}
    claims = {"ibm_claims": load_ibm_claims(data_dir, "test"), "argkp_key_points": argkp_key_points(data_dir),
              "ibm_subjects": load_ibm_targets(data_dir, "test", subjects_only=True)}
    arguments, key_points = load_argkp_test(data_dir), _by_topic(claims["argkp_key_points"])
    runs = {"text_heads": (False, 0), "text_cross": (False, None), "text_cross_top10": (False, 10),
            "stated_heads": (True, 0), "stated_cross": (True, None), "stated_cross_top10": (True, 10)}
    for form, title in (("motion", str), ("question", question_or_motion)):
        for name, examples in claims.items():
            for reader, cross in (("heads", False), ("cross", True)):
                predicted = []
                for motion, rows in _by_topic(examples).items():
                    sides = model.orient(Topic("1", title(motion)), [e.text for e in rows], cross=cross)
                    predicted += [("PRO", "CON")[int(row.argmax())] for row in sides]
                gold = [e.label for rows in _by_topic(examples).values() for e in rows]
                result[f"{form}_orientation_{name}_{reader}"] = dict(label_scores(gold, predicted, ["PRO", "CON"]),
                                                                     n=len(gold))
        rng = np.random.default_rng(seed)  # the same key points drawn for either form
        found: dict[str, tuple[list[str], list[str]]] = {name: ([], []) for name in runs}
        for motion, rows in _by_topic(arguments).items():
            drawn = [key_points[motion][int(i)] for i in rng.integers(len(key_points[motion]), size=len(rows))]
            stated = [("PRO" if e.label == k.label else "CON", k.text) for e, k in zip(rows, drawn)]
            for name, (use_stated, depth) in runs.items():
                predicted = model.predict(Topic("1", title(motion)), [e.text for e in rows], task="controversial",
                                          cross_depth=len(rows) if depth is None else depth,
                                          stated=stated if use_stated else None)
                found[name][0].extend(e.label for e in rows)
                found[name][1].extend(p.label for p in predicted)
        for name, (gold, predicted) in found.items():
            result[f"{form}_argkp_simulation_{name}"] = dict(label_scores(gold, predicted, ["PRO", "CON"]),
                                                             n=len(gold))
    return result


# Conclusions in args.me's title styles for UKPConvArg1's yes/no debates (written by hand for stated-debates), each
# with its side of the debate's question.
UKP_CONCLUSIONS = {
    "Should plastic water bottles be banned?": {
        "Plastic water bottles": "CON", "Ban plastic water bottles": "PRO",
        "Bottled water is bad for the environment": "PRO", "Plastic bottles are needed in emergencies": "CON"},
    "Is allowing gay marriage right?": {
        "Gay marriage": "PRO", "Gay marriage should be legal": "PRO", "Marriage is between a man and a woman": "CON",
        "Same-sex marriage should be banned": "CON"},
    "Should parents use spanking as an option to discipline?": {
        "Spanking": "PRO", "Spanking is child abuse": "CON", "Parents should be allowed to spank their children": "PRO",
        "Corporal punishment should be banned": "CON"},
    "If your spouse committed murder and confided in you, would you turn them in?": {
        "You should report a spouse who committed murder": "PRO", "Loyalty to your spouse comes first": "CON",
        "Murderers must face justice": "PRO"},
    "Does India have the potential to lead the world?": {
        "India will be a superpower": "PRO", "India cannot lead the world": "CON", "India": "PRO"},
    "Is porn wrong?": {
        "Pornography": "CON", "Porn is harmful": "PRO", "Pornography should be legal": "CON", "Ban pornography": "PRO"},
    "Is the school uniform a good idea?": {
        "School uniforms": "PRO", "School uniforms should be banned": "CON", "Students should wear uniforms": "PRO",
        "Uniforms limit self-expression": "CON"},
    "Should physical education be mandatory in schools?": {
        "Mandatory physical education": "PRO", "PE should be optional": "CON",
        "Physical education improves health": "PRO"},
    "Ought William Farquhar to be honoured as the rightful founder of Singapore?": {
        "Raffles is the founder of Singapore": "CON", "Farquhar founded Singapore": "PRO"},
}


def debate_sets(data_dir: Path) -> dict[str, list[tuple[Topic, list[str], list[str], list[tuple[str, str]], int]]]:
    """Per set, its topics as (topic, texts, gold PRO / CON, conclusions (text, side) to draw from, texts a run
    reads): ArgKP-2021's 3 test motions asked as questions (head 100), the conclusions either other arguments of the
    motion (distinct, so debates stay small) or its key points (shared by about 30 arguments each); UKPConvArg1's
    9 yes/no debates (real debate posts; head 30), the conclusions written by hand in args.me's title styles
    (UKP_CONCLUSIONS)."""
    key_points = _by_topic(argkp_key_points(data_dir))
    sets: dict[str, list] = {"argkp_test_argument_conclusions": [], "argkp_test_key_point_conclusions": [],
                             "ukp_posts": []}
    for motion, rows in _by_topic(load_argkp_test(data_dir)).items():
        topic, texts, gold = Topic("1", question_or_motion(motion)), [e.text for e in rows], [e.label for e in rows]
        sets["argkp_test_argument_conclusions"].append((topic, texts, gold, [(e.text, e.label) for e in rows], 100))
        sets["argkp_test_key_point_conclusions"].append((topic, texts, gold,
                                                         [(k.text, k.label) for k in key_points[motion]], 100))
    for topic, texts, gold in read_ukp_debates(data_dir):
        if topic.objects is None:
            sets["ukp_posts"].append((topic, texts, gold, list(UKP_CONCLUSIONS[topic.title].items()), 30))
    return sets


def draw_debates(rng: np.random.Generator, texts: list[str], conclusions: list[tuple[str, str]],
                 mean_size: float) -> list[tuple[int, tuple[str, str]]]:
    """Consecutive texts split into debates of 1 + Poisson(mean_size - 1) texts: per text, its debate's number and
    conclusion (text, side), drawn from `conclusions`; an argument is not its own debate's conclusion."""
    drawn: list[tuple[int, tuple[str, str]]] = []
    while len(drawn) < len(texts):
        members = range(len(drawn), min(len(drawn) + 1 + int(rng.poisson(mean_size - 1)), len(texts)))
        conclusion = conclusions[int(rng.integers(len(conclusions)))]
        while conclusion[0] in (texts[m] for m in members):
            conclusion = conclusions[int(rng.integers(len(conclusions)))]
        number = drawn[-1][0] + 1 if drawn else 0
        drawn += [(number, conclusion) for _ in members]
    return drawn


def stated_debates(data_dir: Path, seed: int = SEED, mean_size: float = 3.0, heads: bool = False) -> dict:
    """args.me-like debates: texts in random order split into debates of 1 + Poisson(mean_size - 1) texts, each
    debate with one conclusion and each text the stance toward it that its own side implies; a run reads the first
    `head` texts of a topic (cross-encoder on all of them, as the default run reads its reranked head) and labels
    the rest by their stated stance alone, as its tail. PRO / CON macro-F1 of the head, the tail and all, with each
    conclusion's orientation heard from the texts read that state a stance toward it (`StanceModel.stated_sides`,
    shipped) and read alone (before). Sets: `debate_sets`. With `heads` the run reads with the heads alone
    (`--stance-model head`), which hear the debates by their own readings."""
    model = StanceModel.load(device="cpu")
    heard = model.stated_sides

    def alone(topic, stated, topic_embedding=None, cross=True, readings=None):
        return heard(topic, stated, topic_embedding, cross)

    result = {}
    for name, topics in debate_sets(data_dir).items():
        rng = np.random.default_rng(seed)
        found = {reader: {part: ([], []) for part in ("head", "tail")} for reader in ("heard", "alone")}
        for topic, texts, gold, conclusions, head in topics:
            order = rng.permutation(len(texts))
            texts, gold = [texts[i] for i in order], [gold[i] for i in order]
            stated = [("PRO" if gold[m] == side else "CON", text)
                      for m, (_, (text, side)) in enumerate(draw_debates(rng, texts, conclusions, mean_size))]
            for reader, sides in (("heard", heard), ("alone", alone)):
                model.stated_sides = sides
                predicted = model.predict(topic, texts[:head], task="controversial",
                                          cross_depth=0 if heads else head,
                                          stated=stated[:head], unread=stated[head:])
                for part, rows in (("head", slice(0, head)), ("tail", slice(head, None))):
                    found[reader][part][0].extend(gold[rows])
                    found[reader][part][1].extend(p.label for p in predicted[rows])
        for reader, parts in found.items():
            every = ([label for gold, _ in parts.values() for label in gold],
                     [label for _, predicted in parts.values() for label in predicted])
            result[f"{name}_{reader}"] = {part: dict(label_scores(*labels, ["PRO", "CON"]), n=len(labels[0]))
                                          for part, labels in (*parts.items(), ("all", every))}
    model.stated_sides = heard
    return result


def debate_titles(data_dir: Path, seed: int = SEED, mean_size: float = 3.0, labels: Path | None = None) -> dict:
    """args.me without a stated stance: `debate_sets`' texts in the debates `draw_debates` draws, each argument
    joined with its debate's conclusion as TIREx writes args.me (premises + " " + conclusion: "closing") and as BEIR
    and passage files made from args.me do (conclusion + " " + premises: "opening"), under args.me ids that name
    the debate. The cross-encoder reads a topic's first `head` texts (a run's reranked head) as a run would: the
    joined text, the joined text without the words its debate shares (`app.debates`, shipped), and the argument
    alone (what stripping aims at). PRO / CON macro-F1 over the texts read (NEU and NO count as misses); the heads
    read the joined text's embedding in all three. With `labels` (a TSV qid, docid, label of BEIR's
    webis-touche2020 sample texts, as `beir_sample` reads them), also those real args.me texts as BEIR gives them."""
    model = StanceModel.load(device="cpu")
    result = {}
    for name, topics in debate_sets(data_dir).items():
        rng = np.random.default_rng(seed)
        found: dict[str, tuple[list, list]] = {}
        for topic, texts, gold, conclusions, head in topics:
            order = rng.permutation(len(texts))
            texts, gold = [texts[i] for i in order][:head], [gold[i] for i in order][:head]
            drawn = draw_debates(rng, texts, conclusions, mean_size)
            for layout in ("opening", "closing"):
                joined = [f"{conclusion} {text}" if layout == "opening" else f"{text} {conclusion}"
                          for text, (_, (conclusion, _)) in zip(texts, drawn)]
                documents = [Document(f"S{number:x}-A{i:x}", text)
                             for i, (text, (number, _)) in enumerate(zip(joined, drawn))]
                shared = debates.shared_words(documents)
                embeddings = model._encode(joined)
                for reading, read in (("joined", joined),
                                      ("without_shared", [debates.own_words(d.text, shared.get(d.doc_id))
                                                          for d in documents]),
                                      ("argument_alone", texts)):
                    predicted = model.predict(topic, read, embeddings, task="controversial", cross_depth=len(read))
                    truth, labels_found = found.setdefault(f"{layout}_{reading}", ([], []))
                    truth.extend(gold)
                    labels_found.extend(p.label for p in predicted)
        result[name] = {key: dict(label_scores(truth, predicted, ["PRO", "CON"]), n=len(truth))
                        for key, (truth, predicted) in found.items()}
    if labels is not None:
        result["beir_sample"] = beir_sample(data_dir, labels, model)
    return result


def beir_sample_pairs(data_dir: Path, labels: Path) -> list[tuple[str, str, str]]:
    """The sided texts of BEIR's sample (`beir_sample`) as (query, text without its debate's shared words, label)."""
    rows = []
    for topic, documents, truth in read_beir_sample(data_dir, labels):
        shared = debates.shared_words(documents)
        rows += [(topic.title, debates.own_words(d.text, shared.get(d.doc_id)), label)
                 for d, label in zip(documents, truth) if label in ("PRO", "CON")]
    return rows


def read_beir_sample(data_dir: Path, labels: Path) -> list[tuple[Topic, list[Document], list[str]]]:
    """BEIR webis-touche2020's sample texts per query (first copies only: 21 lines repeat a text) with the labels
    of `labels` (TSV: qid, docid, label PRO / CON / NONE)."""
    import csv
    import gzip

    truth = {(row["qid"], row["docid"]): row["label"]
             for row in csv.DictReader(labels.open(encoding="utf-8"), delimiter="\t")}
    topics: dict[str, tuple[Topic, list[Document]]] = {}
    with gzip.open(data_dir / "beir-webis-touche2020" / "sample-with-title-for-lnc2.jsonl.gz", "rt",
                   encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            doc_id = row["docid"][: -len("_____1")]
            topic, documents = topics.setdefault(row["qid"], (Topic(row["qid"], row["query"]), []))
            if row["docid"].endswith("_____1") and doc_id not in {document.doc_id for document in documents}:
                documents.append(Document(doc_id, row["text"]))
    return [(topic, documents, [truth[(topic.number, d.doc_id)] for d in documents])
            for topic, documents in topics.values()]


def title_route(data_dir: Path, labels: Path, weights: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0)) -> dict:
    """The 69 sided texts of BEIR's sample with a sibling (their debate's title found by `debates.shared_words`),
    each read without the title: toward the query (shipped), and toward its title turned by the title's orientation
    toward the query (the route of a stated stance), alone and added to the first at each weight. PRO / CON
    macro-F1 and the texts right."""
    from app.stance import _log_odds, _pro_con

    model = StanceModel.load(device="cpu")
    rows = []
    for topic, documents, truth in read_beir_sample(data_dir, labels):
        shared = debates.shared_words(documents)
        for document, label in zip(documents, truth):
            if label in ("PRO", "CON") and document.doc_id in shared:
                opening, closing = shared[document.doc_id]
                rows.append((topic, " ".join(opening or closing), debates.own_words(document.text,
                                                                                    shared[document.doc_id]), label))

    def toward(question: str, text: str) -> float:
        return float(_log_odds(_pro_con(model.cross.controversial(question, [text]), model.cross.labels))[0])

    direct = np.array([toward(topic.title, own) for topic, _, own, _ in rows])
    route = np.array([toward(title, own) * np.sign(_log_odds(model.orient(topic, [title]))[0])
                      for topic, title, own, _ in rows])
    gold = [label for *_, label in rows]

    def scored(odds: np.ndarray) -> dict:
        predicted = ["PRO" if value > 0 else "CON" for value in odds]
        return dict(label_scores(gold, predicted, ["PRO", "CON"]), right=sum(g == p for g, p in zip(gold, predicted)))

    return dict(n=len(rows), toward_the_query=scored(direct), by_the_title=scored(route),
                **{f"both_at_{weight}": scored(direct + weight * route) for weight in weights})


TURN_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)


def debate_turns(data_dir: Path, labels: Path) -> dict:
    """Posts that hear the other posts of their debate (`app.debates.heard_from_turns`) on the real args.me texts of
    BEIR's sample (`read_beir_sample`; args.me 1.0 ids number a debate's posts): first how often two sided posts of
    one debate take the same side toward the query, by the parity of their numbers; then `StanceModel.predict` on
    each query's texts, each read by the cross-encoder without its debate's shared words, hearing its debate at
    each weight of TURN_WEIGHTS (0: not at all). PRO / CON macro-F1 over the sided texts and over those with
    another of their debate in the sample."""
    import functools

    model = StanceModel.load(device="cpu")
    sample = read_beir_sample(data_dir, labels)
    pairs = Counter()
    for _, documents, truth in sample:
        sided = [(debates.turn(d.doc_id), label) for d, label in zip(documents, truth) if label in ("PRO", "CON")]
        for i, (first, side) in enumerate(sided):
            for second, other in sided[i + 1:]:
                if first[0] == second[0]:
                    parity = "same_parity" if (first[1] - second[1]) % 2 == 0 else "other_parity"
                    pairs[f"{parity}_{'same' if side == other else 'opposite'}_side"] += 1
    result: dict = {"pairs": dict(sorted(pairs.items()))}
    shipped = debates.heard_from_turns
    try:
        for weight in TURN_WEIGHTS:
            debates.heard_from_turns = functools.partial(shipped, weight=weight)
            found = {"all": ([], []), "in_debates": ([], [])}
            for topic, documents, truth in sample:
                shared = debates.shared_words(documents)
                turns = [debates.turn(d.doc_id) for d in documents]
                texts = [debates.own_words(d.text, shared.get(d.doc_id)) for d in documents]
                predicted = model.predict(topic, texts, model._encode([d.text for d in documents]),
                                          task="controversial", cross_depth=len(texts), turns=turns)
                for position, prediction, gold in zip(turns, predicted, truth):
                    if gold not in ("PRO", "CON"):
                        continue
                    siblings = sum(other[0] == position[0] for other in turns) > 1
                    for part in ("all", "in_debates") if siblings else ("all",):
                        found[part][0].append(gold)
                        found[part][1].append(prediction.label)
            result[f"weight_{weight}"] = {part: dict(label_scores(*labels_, ["PRO", "CON"]), n=len(labels_[0]))
                                          for part, labels_ in found.items()}
    finally:
        debates.heard_from_turns = shipped
    return result


def beir_sample_run(data_dir: Path, labels: Path, work: Path, rerank_depths: tuple[int, ...] = (100, 3)) -> dict:
    """The whole pipeline on BEIR's sample texts as a `passages.jsonl.gz` input with the 49 Touché 2020 topics
    (`--task controversial`), at each rerank depth (3: most of a topic's texts lie below it, as in a run over the
    whole args.me corpus): PRO / CON macro-F1 over the sided texts (Q0 counts as a miss), the texts right and the
    Q0 left, reading each text whole ("neither"), without its debate's title ("titles"), and also hearing its
    debate's turns, below the rerank depth too (`app.debates`; "titles_and_turns", shipped)."""
    import gzip

    from app import bench
    from app.labelling import detect_stances
    from app.settings import RunSettings
    from app.topics import read_topics

    input_dir = work / "beir-sample"
    input_dir.mkdir(parents=True, exist_ok=True)
    sample = read_beir_sample(data_dir, labels)
    with gzip.open(input_dir / "passages.jsonl.gz", "wt", encoding="utf-8") as out:
        for _, documents, _ in sample:
            out.writelines(json.dumps({"id": d.doc_id, "contents": d.text}) + "\n" for d in documents)
    with gzip.open(data_dir / "beir-webis-touche2020" / "topics.beir-v1.0.0-webis-touche2020.test.tsv.gz", "rt",
                   encoding="utf-8") as handle:
        queries = [line.rstrip("\n").split("\t", 1) for line in handle if line.strip()]
    bench.write_topics(input_dir, queries)
    truth = {(topic.number, d.doc_id): label for topic, documents, gold in sample for d, label in zip(documents, gold)}
    topics = read_topics(input_dir)
    shipped = debates.shared_words, debates.turn
    result = {}
    try:
        for depth in rerank_depths:
            settings = RunSettings(input_dir=input_dir, output_dir=work / "out", cache_dir=work / "cache",
                                   progress=False, rerank_depth=depth)
            candidates, encoded, queries_, ranked, best = _up_to_stance(settings, topics)
            for variant in ("neither", "titles", "titles_and_turns"):
                debates.shared_words = shipped[0] if variant != "neither" else (lambda documents, wanted=None: {})
                debates.turn = shipped[1] if variant == "titles_and_turns" else (lambda doc_id: None)
                found = detect_stances(topics, ranked, best, encoded, queries_, "controversial", settings, candidates)
                gold, predicted = [], []
                for topic in topics:
                    for doc_id, label in zip(ranked[topic.number][0], found[topic.number]):
                        if truth.get((topic.number, doc_id)) in ("PRO", "CON"):
                            gold.append(truth[(topic.number, doc_id)])
                            predicted.append(label)
                result[f"rerank_depth_{depth}_{variant}"] = dict(
                    label_scores(gold, predicted, ["PRO", "CON"]), n=len(gold),
                    right=sum(g == p for g, p in zip(gold, predicted)), q0=predicted.count("Q0"))
    finally:
        debates.shared_words, debates.turn = shipped
    return result


def beir_sample(data_dir: Path, labels: Path, model: StanceModel) -> dict:
    """The 229 args.me texts of BEIR's webis-touche2020 sample (`beir-webis-touche2020/sample-with-title-for-lnc2`;
    title + " " + premises, args.me 1.0 ids) with stance labels toward their query read by this project (`labels`:
    qid, docid, PRO / CON / NONE; not Touché's judgements, which hold no stance for args.me), each query a topic
    whose texts the cross-encoder reads whole, joined as given and without the words its debate's texts in the
    sample share (`app.debates`). PRO / CON macro-F1 over the texts labelled PRO or CON; also over those in a
    debate with another sample text, the only ones stripping changes."""
    found = {key: ([], []) for key in ("joined", "without_shared", "joined_in_debates", "without_shared_in_debates")}
    for topic, documents, truth in read_beir_sample(data_dir, labels):
        shared = debates.shared_words(documents)
        embeddings = model._encode([d.text for d in documents])
        for reading, read in (("joined", [d.text for d in documents]),
                              ("without_shared", [debates.own_words(d.text, shared.get(d.doc_id))
                                                  for d in documents])):
            predicted = model.predict(topic, read, embeddings, task="controversial", cross_depth=len(read))
            for document, prediction, gold in zip(documents, predicted, truth):
                if gold not in ("PRO", "CON"):
                    continue
                for key in (reading, f"{reading}_in_debates") if document.doc_id in shared else (reading,):
                    found[key][0].append(gold)
                    found[key][1].append(prediction.label)
    return {key: dict(label_scores(gold, predicted, ["PRO", "CON"]), n=len(gold))
            for key, (gold, predicted) in found.items()}


FNC1_LABELS = {"agree": "PRO", "disagree": "CON", "discuss": "NEU", "unrelated": "NO"}
FNC1_FILES = {"train": ("train_bodies.csv.gz", "train_stances.csv.gz"),
              "test": ("competition_test_bodies.csv.gz", "competition_test_stances.csv.gz")}


def fnc1_pairs(data_dir: Path, split: str, embed) -> list[tuple[str, str, str, np.ndarray, str]]:
    """FNC-1's pairs of `split` as (headline, body id, text, its embedding, label), as a run reads a long document:
    each article is cut into passages (app.passages.windows) and read by the one closest to the headline; labels
    PRO / CON / NEU / NO (FNC1_LABELS)."""
    import csv
    import gzip

    from app.passages import windows

    folder = data_dir / "stance" / "fnc1"
    csv.field_size_limit(sys.maxsize)
    bodies_file, stances_file = FNC1_FILES[split]
    with gzip.open(folder / bodies_file, "rt", encoding="utf-8", newline="") as handle:
        bodies = {row["Body ID"]: windows(row["articleBody"]) or [""] for row in csv.DictReader(handle)}
    with gzip.open(folder / stances_file, "rt", encoding="utf-8", newline="") as handle:
        pairs = [(row["Headline"], row["Body ID"], FNC1_LABELS[row["Stance"]]) for row in csv.DictReader(handle)]
    flat = embed([text for texts in bodies.values() for text in texts])
    ends = np.cumsum([len(texts) for texts in bodies.values()])
    vectors = dict(zip(bodies, np.split(flat, ends[:-1])))
    headlines = sorted({headline for headline, _, _ in pairs})
    headline_vectors = dict(zip(headlines, embed(headlines)))
    result = []
    for headline, body, label in pairs:
        best = int(np.argmax(vectors[body] @ headline_vectors[headline]))
        result.append((headline, body, bodies[body][best], vectors[body][best], label))
    return result


def fnc1(data_dir: Path, embed, model_path: Path | None = None, cross_sample: int = 300, seed: int = SEED) -> dict:
    """The shipped stance models on FNC-1's test split (`fnc1_pairs`): each headline is a topic; 4-class macro-F1
    with agree / disagree / discuss / unrelated as PRO / CON / NEU / NO. Heads on every pair; the cross-encoder
    (which reads the top 10 in a run) on the pairs of `cross_sample` headlines drawn with `seed`, heads beside it on
    the same pairs. `model_path`: a stance.npz (default: the shipped)."""
    model, grouped = StanceModel.load(model_path, device="cpu"), {}
    for headline, _, text, vector, label in fnc1_pairs(data_dir, "test", embed):
        grouped.setdefault(headline, []).append((text, vector, label))
    headlines = sorted(grouped)
    headline_vectors = dict(zip(headlines, embed(headlines)))
    sample = set(np.random.default_rng(seed).choice(headlines, size=min(cross_sample, len(headlines)),
                                                    replace=False).tolist())
    found: dict[str, tuple[list[str], list[str]]] = {}
    seconds = {"heads": 0.0, "cross": 0.0}
    for headline, rows in grouped.items():
        texts, embeddings = [text for text, _, _ in rows], np.vstack([vector for _, vector, _ in rows])
        gold = [label for _, _, label in rows]
        runs = [("heads", 0)] + ([("sample_heads", 0), ("sample_cross", len(texts))] if headline in sample else [])
        for name, depth in runs:
            start = time.perf_counter()
            predicted = model.predict(Topic("1", headline), texts, embeddings, "controversial",
                                      query_embeddings=headline_vectors[headline], cross_depth=depth)
            seconds["cross" if depth else "heads"] += time.perf_counter() - start
            found.setdefault(name, ([], []))[0].extend(gold)
            found[name][1].extend(p.label for p in predicted)
    result = {name: dict(label_scores(gold, predicted, list(FNC1_LABELS.values())), n=len(gold))
              for name, (gold, predicted) in found.items()}
    result["seconds"] = {name: round(value, 1) for name, value in seconds.items()}
    return result


def fnc1_neutral(data_dir: Path, embed, out: Path, seed: int = SEED) -> dict:
    """The neutral head trained on VAST alone (as shipped) and on VAST + FNC-1's related train pairs (discuss as NEU
    against agree / disagree), beside the shipped heads; FNC-1 has no dev split, so a fifth of its train articles
    (drawn with `seed`) is held out. PRO / CON / NEU macro-F1 on VAST test and on the held-out articles' pairs (as
    `sided_or_neutral` decides). Writes OUT/stance-<sets>.npz, the shipped model with that neutral head, for
    ukp-sides and fnc1 (`--model`)."""
    pairs = [pair for pair in fnc1_pairs(data_dir, "train", embed) if pair[4] != "NO"]
    bodies = sorted({body for _, body, _, _, _ in pairs})
    held = set(np.random.default_rng(seed).choice(bodies, size=len(bodies) // 5, replace=False).tolist())
    train = [ControversialExample(h, text, label) for h, body, text, _, label in pairs if body not in held]
    held_out = [ControversialExample(h, text, label) for h, body, text, _, label in pairs if body in held]
    shipped, vast_test = StanceModel.load(device="cpu"), load_vast(data_dir, "test")
    vast = without_topics(load_vast(data_dir, "train"), load_ibm_claims(data_dir, "test"), embed)
    out.mkdir(parents=True, exist_ok=True)
    result = {"fnc1_train_pairs": len(train), "fnc1_held_out_pairs": len(held_out)}
    for name, examples in (("vast", vast), ("vast-fnc1", vast + train)):
        neutral = train_neutral(examples, embed, CONTROVERSIAL_C, seed)
        result[name] = {set_name: label_scores([e.label for e in test],
                                               sided_or_neutral(shipped.controversial, neutral, test, embed),
                                               ["PRO", "CON", "NEU"])
                        for set_name, test in (("vast_test", vast_test), ("fnc1_held_out", held_out))}
        StanceModel(shipped.comparative, shipped.controversial, shipped.neutral_margin, shipped.metadata,
                    side=shipped.side, neutral=neutral).save(out / f"stance-{name}.npz")
    return result


def _up_to_stance(settings, topics):
    """A run's steps before its stance stage (`app.pipeline.run`): each topic's candidates, the encoded passages,
    the topics' query embeddings, each topic's ranking (doc ids, scores) and its documents' best passages."""
    from app import fusion
    from app.fusion import rank
    from app.rerank import score_candidates
    from app.retrieval import first_stage

    candidates, _, cache, _ = first_stage(settings, topics)
    encoded, queries, scored = score_candidates(topics, candidates, settings, cache)
    ranked = {qid: rank(candidates[qid], fusion.fuse(found.features), settings.depth) for qid, found in scored.items()}
    read = {qid: found.read_passages for qid, found in scored.items()}
    return candidates, encoded, queries, ranked, read


def stated_run(data_dir: Path, work: Path, asked: bool = False) -> dict:
    """The whole pipeline on `make bench`'s args-me input (app.bench.write_args_me): the run's stance labels on the
    reranked arguments of each topic's own motion against their ArgKP stance, PRO / CON macro-F1 (NEU / NO count
    as misses), with and without the stated stances, with the cross-encoder on the top 10 or on the whole reranked
    head (the default run) and with the heads only; and the same over every argument of its motion the run ranks
    (`whole_run`; Q0 below the rerank depth counts as a miss).
    `asked`: the topics' titles asked as Touché writes its topics (`question_or_motion`: "Should we X?")."""
    from app import bench
    from app.labelling import detect_stances
    from app.questions import topic_task
    from app.settings import RunSettings
    from app.topics import read_topics

    input_dir = bench.write_args_me(work / "args-me", data_dir)
    settings = RunSettings(input_dir=input_dir, output_dir=work / "out", cache_dir=work / "cache", progress=False)
    task, topics, _ = topic_task(read_topics(input_dir), "controversial")
    motions = {topic.number: topic.title for topic in topics}
    if asked:
        topics = [replace(topic, title=question_or_motion(topic.title)) for topic in topics]
    candidates, encoded, queries, ranked, best = _up_to_stance(settings, topics)
    gold = {}
    for example in load_argkp_all(data_dir):
        gold[(example.topic, example.text)] = example.label
    test_motions = {example.topic for example in load_argkp_test(data_dir)}
    result = {}
    every_reranked = settings.rerank_depth
    for name, model, depth, with_stated in (
            ("text_cross_top10", "cross", 10, False), ("stated_cross_top10", "cross", 10, True),
            ("text_cross_reranked", "cross", every_reranked, False),
            ("stated_cross_reranked", "cross", every_reranked, True),
            ("text_heads", "head", 0, False), ("stated_heads", "head", 0, True)):
        start = time.perf_counter()
        labels = detect_stances(topics, ranked, best, encoded, queries, task,
                                replace(settings, stance_model=model, stance_depth=depth),
                                candidates if with_stated else None)
        seconds = round(time.perf_counter() - start, 1)
        truth, predicted, held_out, reranked = [], [], [], []
        for topic in topics:
            documents = {c.doc.doc_id: c.doc for c in candidates[topic.number]}
            for position, (doc_id, label) in enumerate(zip(ranked[topic.number][0], labels[topic.number])):
                premise = documents[doc_id].text[len(documents[doc_id].stance_target) + 1:]
                motion = motions[topic.number]
                if (motion, premise) in gold:
                    truth.append(gold[(motion, premise)])
                    predicted.append(label)
                    held_out.append(motion in test_motions)
                    reranked.append(position < settings.rerank_depth)

        def scores(rows: list[int]) -> dict:
            return dict(label_scores([truth[i] for i in rows], [predicted[i] for i in rows], ["PRO", "CON"]),
                        n=len(rows), labels=dict(Counter(predicted[i] for i in rows)))

        every = range(len(truth))
        result[name] = dict(scores([i for i in every if reranked[i]]), stance_seconds=seconds,
                            argkp_test_motions=scores([i for i in every if reranked[i] and held_out[i]]),
                            whole_run=scores(list(every)),
                            whole_run_test_motions=scores([i for i in every if held_out[i]]))
    return result


CONSENSUS_STRENGTHS = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0)


def with_consensus(probabilities: np.ndarray, strength: float) -> np.ndarray:
    """Comparative probabilities of a topic's ranked texts (best first), each text's FIRST-vs-SECOND log-odds moved
    by `strength` times the weighted mean of the other texts' (weights: P(FIRST) + P(SECOND) over log2(rank + 1)).
    Naming the objects the other way round negates every leaning, so FIRST and SECOND still exchange exactly."""
    first, second = LABELS.index("FIRST"), LABELS.index("SECOND")
    clipped = np.clip(np.asarray(probabilities, dtype=np.float64), 1e-9, None)
    log_p = np.log(clipped)
    odds = log_p[:, first] - log_p[:, second]
    weights = (clipped[:, first] + clipped[:, second]) / np.log2(np.arange(len(odds)) + 2)
    others = weights.sum() - weights
    leaning = np.divide((weights * odds).sum() - weights * odds, others, out=np.zeros_like(odds), where=others > 0)
    log_p[:, first] += strength * leaning / 2
    log_p[:, second] -= strength * leaning / 2
    shifted = np.exp(log_p)
    return shifted / shifted.sum(axis=1, keepdims=True)


def consensus(qa, dev, embed, work: Path) -> dict:
    """Comparative stance as a run labels the 2022 dev topics of tira-input (`app.labelling.reranked_head` of each
    topic, best passages first), each fold's topics labelled by a head trained without them, its FIRST-vs-SECOND
    leaning toward the topic's other passages (`with_consensus`) at each strength: macro-F1 over the judged
    passages the heads hold, 5 fold splits; per split, the strength chosen on each fold's other topics (`nested`);
    and strength 2 against none passage by passage (labels changed, right before / after) and topic by topic
    (`strength_2`: topics with more / fewer judged passages right)."""
    from app.labelling import reranked_head
    from app.questions import topic_task
    from app.settings import RunSettings
    from app.topics import read_topics

    input_dir = common.DEFAULT_DATA_DIR / common.TASK / "tira-input"
    settings = RunSettings(input_dir=input_dir, output_dir=work / "out", cache_dir=work / "cache", progress=False)
    _, topics, _ = topic_task(read_topics(input_dir), "comparative")
    topics = [topic for topic in topics if topic.number in {e.group for e in dev}]
    _, encoded, queries, ranked, best = _up_to_stance(settings, topics)
    heads = {}
    for topic in topics:
        doc_ids = reranked_head(ranked[topic.number][0], best[topic.number], settings.rerank_depth)
        heads[topic.number] = (topic, doc_ids, [best[topic.number][doc_id][0] for doc_id in doc_ids])
    judged = common.read_dev_stances(common.DEFAULT_DATA_DIR)
    model, side = StanceModel.load(), _shipped_side()
    model.side = side
    by_strength = {strength: [] for strength in CONSENSUS_STRENGTHS}
    nested, paired = [], []  # paired: strength 2 against none, passage by passage and topic by topic
    for split in range(SPLITS):
        pairs = {}  # (strength, topic) -> [(gold, predicted)] over the topic's judged passages in its head
        folds = common.topic_folds([e.group for e in dev], FOLDS, SEED + split)
        for fold in folds:
            model.comparative = train_comparative(qa, [e for e in dev if e.group not in fold], embed, COMPARATIVE_C,
                                                  DEV_WEIGHT, SEED + split, side)
            for qid in fold:
                topic, doc_ids, rows = heads[qid]
                probabilities = model.comparative_probabilities([encoded.texts[row] for row in rows], topic.objects,
                                                                encoded.vectors[rows], queries[qid])
                for strength in CONSENSUS_STRENGTHS:
                    labels = decode_comparative(with_consensus(probabilities, strength), LABELS)
                    pairs[strength, qid] = [(judged[qid, doc_id], label.label)
                                            for doc_id, label in zip(doc_ids, labels) if (qid, doc_id) in judged]

        def score(strength, qids) -> float:
            rows = [pair for qid in qids for pair in pairs[strength, qid]]
            return label_scores([gold for gold, _ in rows], [label for _, label in rows], LABELS)

        def right(strength, qid) -> int:
            return sum(gold == label for gold, label in pairs[strength, qid])

        every = [qid for fold in folds for qid in fold]
        for strength in CONSENSUS_STRENGTHS:
            by_strength[strength].append(score(strength, every))
        changed = [(gold, before, after) for qid in every
                   for (gold, before), (_, after) in zip(pairs[0.0, qid], pairs[2.0, qid]) if before != after]
        paired.append(dict(changed=len(changed), right_before=sum(gold == before for gold, before, _ in changed),
                           right_after=sum(gold == after for gold, _, after in changed),
                           topics_better=sum(right(2.0, qid) > right(0.0, qid) for qid in every),
                           topics_worse=sum(right(2.0, qid) < right(0.0, qid) for qid in every)))
        chosen = {qid: max(CONSENSUS_STRENGTHS, key=lambda strength: score(strength, set(every) - fold)["macro_f1"])
                  for fold in folds for qid in fold}
        rows = [pair for qid in every for pair in pairs[chosen[qid], qid]]
        nested.append(dict(label_scores([gold for gold, _ in rows], [label for _, label in rows], LABELS),
                           strengths=sorted({chosen[qid] for qid in every})))
        logging.info("split %d: %s", split, {strength: scores[-1]["macro_f1"] for strength, scores in
                                             by_strength.items()})

    def summary(scores: list[dict]) -> dict:
        return dict(_mean_sd([row["macro_f1"] for row in scores]),
                    per_label={label: round(float(np.mean([row["per_label"][label] for row in scores])), 3)
                               for label in LABELS})

    return dict(judged=sum(len(pairs[0.0, qid]) for qid in heads),
                by_strength={strength: summary(scores) for strength, scores in by_strength.items()},
                nested=dict(summary(nested), strengths=[row["strengths"] for row in nested]), strength_2=paired)


def load_argkp_all(data_dir: Path):
    """All ArgKP-2021 arguments (train, dev, test: the args-me bench input holds them all) with their stance."""
    import csv

    from app.training.stance import ARGKP_FILES, ControversialExample

    examples = []
    for split in ("train", "dev", "test"):
        with (data_dir / "stance" / "ibm-argkp-2021" / ARGKP_FILES[split]).open(newline="", encoding="utf-8") as f:
            examples += [ControversialExample(row["topic"], row["argument"].strip(),
                                              "PRO" if row["stance"] == "1" else "CON") for row in csv.DictReader(f)]
    return examples


def _by_topic(examples):
    grouped = {}
    for example in examples:
        grouped.setdefault(example.topic, []).append(example)
    return grouped


def load_argkp_test(data_dir: Path):
    from app.training.stance import load_argkp

    return load_argkp(data_dir, ("test",))


def argkp_key_points(data_dir: Path):
    """ArgKP-2021 test key points as claims with their PRO / CON stance toward the motion."""
    import csv

    from app.training.stance import ControversialExample

    path = data_dir / "stance" / "ibm-argkp-2021" / "test_data" / "key_points_test.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        return [ControversialExample(row["topic"], row["key_point"], "PRO" if row["stance"] == "1" else "CON")
                for row in csv.DictReader(handle)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", choices=("comparative-cross", "argq-init", "query-cosines", "neutral-proxy",
                                               "ukp-sides",
                                               "controversial-sets", "stated", "stated-run", "fnc1",
                                               "fnc1-neutral", "stemmed-mentions", "relevance-no", "label-biases",
                                               "targets-dev", "long-texts", "stated-debates", "object-embeddings",
                                               "neural-side", "cross-sides", "ukp-finetune", "consensus",
                                               "debate-titles", "ukp-finetune-all", "post-readings", "debate-turns",
                                               "title-route", "object-sentiment", "sidedness", "sided-data",
                                               "window-votes", "antonym-swaps", "feature-groups",
                                               "nonlinear-head", "clean-motions", "no-objects", "length-free"))
    parser.add_argument("--out", type=Path, default=Path("out/stance-sets"),
                        help="controversial-sets, fnc1-neutral, targets-dev: models here; stated-run, consensus, "
                             "debate-turns: the run's work")
    parser.add_argument("--model", type=Path, default=None, help="ukp-sides, fnc1: a stance.npz (default: the shipped)")
    parser.add_argument("--cross", type=Path, default=None,
                        help="ukp-sides, stated: a stance cross-encoder delta (default: the shipped)")
    parser.add_argument("--splits", type=int, default=1, help="fold splits for comparative-cross, argq-init")
    parser.add_argument("--heads", action="store_true",
                        help="stated-debates: the run reads with the heads alone (--stance-model head)")
    parser.add_argument("--labels", type=Path, default=None,
                        help="debate-titles, ukp-finetune-all, title-route, post-readings, debate-turns, "
                             "window-votes: stance labels of BEIR's webis-touche2020 sample texts (TSV)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache, e.g. /tmp/stance-cache")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    if args.experiment == "ukp-sides":
        print(json.dumps(ukp_sides(args.model, args.cross), indent=2))
        return
    if args.experiment == "clean-motions":
        print(json.dumps(clean_motions(common.DEFAULT_DATA_DIR, args.cross, args.cache_dir), indent=2))
        return
    if args.experiment == "stated":
        print(json.dumps(stated_stances(common.DEFAULT_DATA_DIR, cross_path=args.cross), indent=2))
        return
    if args.experiment == "stated-debates":
        print(json.dumps(stated_debates(common.DEFAULT_DATA_DIR, heads=args.heads), indent=2))
        return
    if args.experiment == "debate-titles":
        print(json.dumps(debate_titles(common.DEFAULT_DATA_DIR, labels=args.labels), indent=2))
        return
    if args.experiment == "debate-turns":
        labels = args.labels or Path("docs/data/beir-touche2020-sample-stance.tsv")
        print(json.dumps(dict(debate_turns(common.DEFAULT_DATA_DIR, labels),
                              run=beir_sample_run(common.DEFAULT_DATA_DIR, labels, args.out)), indent=2))
        return
    if args.experiment == "title-route":
        print(json.dumps(title_route(common.DEFAULT_DATA_DIR, args.labels
                                     or Path("docs/data/beir-touche2020-sample-stance.tsv")), indent=2))
        return
    if args.experiment == "antonym-swaps":
        print(json.dumps(antonym_swaps(common.DEFAULT_DATA_DIR), indent=2))
        return
    if args.experiment == "window-votes":
        print(json.dumps(window_votes(common.DEFAULT_DATA_DIR, args.labels
                                      or Path("docs/data/beir-touche2020-sample-stance.tsv")), indent=2))
        return
    if args.experiment == "post-readings":
        print(json.dumps(post_readings(common.DEFAULT_DATA_DIR, args.labels
                                       or Path("docs/data/beir-touche2020-sample-stance.tsv")), indent=2))
        return
    if args.experiment == "ukp-finetune-all":
        print(json.dumps(ukp_finetune_all(common.DEFAULT_DATA_DIR, args.labels), indent=2))
        return
    if args.experiment == "ukp-finetune":
        print(json.dumps(ukp_finetune(common.DEFAULT_DATA_DIR), indent=2))
        return
    if args.experiment == "long-texts":
        print(json.dumps(long_texts(common.DEFAULT_DATA_DIR), indent=2))
        return
    if args.experiment == "stated-run":
        print(json.dumps({form: stated_run(common.DEFAULT_DATA_DIR, args.out / form, asked)
                          for form, asked in (("motion", False), ("question", True))}, indent=2))
        return
    embed = EmbeddingCache(args.cache_dir)
    if args.experiment == "fnc1":
        print(json.dumps(fnc1(common.DEFAULT_DATA_DIR, embed, args.model), indent=2))
        return
    if args.experiment == "fnc1-neutral":
        print(json.dumps(fnc1_neutral(common.DEFAULT_DATA_DIR, embed, args.out), indent=2))
        return
    if args.experiment == "targets-dev":
        print(json.dumps(targets_dev(common.DEFAULT_DATA_DIR, embed, args.out), indent=2))
        return
    qa, dev = load_qa_pairs(common.DEFAULT_DATA_DIR), load_dev_passages(common.DEFAULT_DATA_DIR)
    if args.experiment == "controversial-sets":
        result = controversial_sets(embed, args.out)
    elif args.experiment == "comparative-cross":
        result = cross_validate_comparative(qa, dev, embed, args.splits, SEED)
    elif args.experiment == "argq-init":
        result = argq_init(qa, dev, embed, args.splits)
    elif args.experiment == "query-cosines":
        result = query_cosines(qa, dev, embed)
    elif args.experiment == "stemmed-mentions":
        result = stemmed_mentions(qa, dev, embed)
    elif args.experiment == "relevance-no":
        result = relevance_no(qa, dev, embed)
    elif args.experiment == "no-objects":
        result = no_objects(qa, dev, embed)
    elif args.experiment == "label-biases":
        result = label_biases(qa, dev, embed)
    elif args.experiment == "object-sentiment":
        result = object_sentiment(qa, dev, embed)
    elif args.experiment == "sidedness":
        result = sidedness(qa, dev, embed)
    elif args.experiment == "length-free":
        result = length_free(qa, dev, embed)
    elif args.experiment == "feature-groups":
        result = feature_groups(qa, dev, embed)
    elif args.experiment == "nonlinear-head":
        result = nonlinear_head(qa, dev, embed)
    elif args.experiment == "sided-data":
        result = sided_data(qa, dev, embed)
    elif args.experiment == "object-embeddings":
        result = object_embeddings(qa, dev, embed)
    elif args.experiment == "neural-side":
        result = neural_side(qa, dev, embed)
    elif args.experiment == "cross-sides":
        result = cross_sides(qa, dev, embed)
    elif args.experiment == "consensus":
        result = consensus(qa, dev, embed, args.out)
    else:
        result = neutral_proxy(qa, dev, embed)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
