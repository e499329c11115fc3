import time
from streamlit.testing.v1 import AppTest
from anonlib.samples import load_sample
t=time.time()
at = AppTest.from_file("pages/individuals.py", default_timeout=120)
at.session_state["active_dataset"] = load_sample("kroes_table1_option2")
at.session_state["active_source"] = "sample:kroes_table1_option2"
at.run()
print("exc", at.exception, time.time()-t)
print([e.value for e in at.error])
print([(m.label, m.value) for m in at.metric])
print([w.value for w in at.markdown][:12])
print(at.dataframe[0].value)
